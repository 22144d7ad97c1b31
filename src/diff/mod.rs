//! Diffs of an agent's proposal against the file on disk.
//!
//! * [`pending`] – `openDiff` requests waiting for the person (state).
//! * [`prepare`] – reads the file and builds what Lua draws.
//! * [`text`]    – lines that join back to the exact text.
//! * [`hunks`]   – line diffs of large files, computed here.
//! * [`words`]   – the words that differ inside changed lines.
//! * [`parts`]   – a large diff's content cut into bounded seam calls.
//! * [`live`]    – the sides of open large diffs, re-diffed after edits.
//! * [`rebase`]  – an accepted edit carried over onto a file that changed.

pub mod hunks;
pub mod live;
pub mod parts;
pub mod pending;
pub mod prepare;
pub mod rebase;
pub mod text;
pub mod words;

/// A text's lines, for tests that build diffs.
#[cfg(test)]
fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}
