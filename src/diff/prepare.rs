//! Everything Lua needs to draw a diff, read and checked off the UI thread:
//! both sides as lines and, for large files, a mark that the changed regions
//! follow, so Neovim need not compute them.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::hunks::{diff_mode_stalls, is_large};
use super::parts::Content;
use super::text::{LineText, Lines};

/// Both sides of a diff, ready to show.
#[derive(Debug, Serialize)]
pub struct Prepared {
    pub original: Lines,
    /// False for a file the agent creates.
    pub original_exists: bool,
    pub proposed: Lines,
    /// Large files: the lines follow in `diff_part` calls, then the
    /// changed regions the host computes, drawn by Lua instead of Neovim's
    /// diff mode (see [`Prepared::take_content`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub parts: bool,
    /// A large diff's lines, in place of `original`'s and `proposed`'s
    /// (which keep only `eol` and `crlf`).
    #[serde(skip)]
    pub content: Option<Content>,
}

impl Prepared {
    /// A large diff's lines, taken out to be sent in parts; what stays is
    /// the small rest Lua opens the view with.
    pub fn take_content(&mut self) -> Option<Content> {
        self.content.take()
    }

    /// Both sides from their texts. A diff too large for diff mode by its
    /// bytes keeps the texts' bytes, never split into a string per line:
    /// megabytes of lines are most of the host's memory while it diffs
    /// them. Diffs the sides when they are small (see [`Prepared::of_lines`]).
    fn of_texts(original: String, original_exists: bool, proposed: String) -> Prepared {
        if !is_large(original.len(), proposed.len()) {
            return Prepared::of_lines(
                Lines::split(&original),
                original_exists,
                Lines::split(&proposed),
            );
        }
        Prepared::large(
            LineText::from_text(original),
            original_exists,
            LineText::from_text(proposed),
        )
    }

    /// Both sides from their lines: Neovim's diff mode shows them unless it
    /// would stall the UI on them ([`diff_mode_stalls`], which diffs sides
    /// of a few thousand lines), then the large-file view does.
    fn of_lines(original: Lines, original_exists: bool, proposed: Lines) -> Prepared {
        let stalls = is_large(text_len(&original), text_len(&proposed))
            || diff_mode_stalls(&strs(&original), &strs(&proposed));
        if !stalls {
            return Prepared::small(original, original_exists, proposed);
        }
        Prepared::large(
            (
                LineText::from_lines(original.lines),
                original.eol,
                original.crlf,
            ),
            original_exists,
            (
                LineText::from_lines(proposed.lines),
                proposed.eol,
                proposed.crlf,
            ),
        )
    }

    /// A diff Neovim's diff mode shows from the lines themselves.
    fn small(original: Lines, original_exists: bool, proposed: Lines) -> Prepared {
        Prepared {
            original,
            original_exists,
            proposed,
            parts: false,
            content: None,
        }
    }

    /// A large diff: its sides' lines (with each side's `eol` and `crlf`)
    /// go in parts, not to `open_diff`.
    fn large(
        (original, original_eol, original_crlf): (LineText, bool, bool),
        original_exists: bool,
        (proposed, eol, crlf): (LineText, bool, bool),
    ) -> Prepared {
        Prepared {
            original: no_lines(original_eol, original_crlf),
            original_exists,
            proposed: no_lines(eol, crlf),
            parts: true,
            content: Some(Content {
                original: Arc::new(original),
                proposed: Arc::new(proposed),
            }),
        }
    }
}

/// What stays of a large side for Lua's `open_diff`.
fn no_lines(eol: bool, crlf: bool) -> Lines {
    Lines {
        lines: Vec::new(),
        eol,
        crlf,
    }
}

/// What Lua's `open_diff` receives.
#[derive(Debug, Serialize)]
pub struct DiffView {
    pub id: u64,
    pub tab_name: String,
    pub path: String,
    pub original_path: String,
    /// `pi`, `claude` or `mcp`, for the winbar.
    pub client: &'static str,
    /// The connection that asked (none for MCP), so Lua can tell which
    /// agent terminal it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<u64>,
    #[serde(flatten)]
    pub sides: Prepared,
    /// Set for edits the host applies itself once accepted (MCP tools).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit: Option<EditInfo>,
}

/// What the winbar says about an edit of an MCP tool, and which diffs
/// belong together (accept-all / reject-all).
#[derive(Debug, Clone, Serialize)]
pub struct EditInfo {
    /// Shared by every file of one tool call.
    pub group: u64,
    /// This file's place in the group, from 1, and the group's size.
    pub index: usize,
    pub count: usize,
    /// The tool that asks, e.g. `rename_refactoring`.
    pub title: String,
    /// The left side is the file's buffer, unsaved edits included, rather
    /// than the file on disk.
    pub from_buffer: bool,
    /// The process that asked for the edit, when known, so Lua can go back
    /// to its agent terminal once the person decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requester_pid: Option<u32>,
    /// A file of the review of what changed since a baseline: the left
    /// side is the baseline, the right side the file as it is now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<TurnFile>,
    /// The agent writes the file itself once it hears the decision (Codex,
    /// opencode): Lua watches it to reload its buffer, as for `openDiff`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub agent_writes: bool,
    /// The agent is told why the person rejected it: Lua asks them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ask_reason: bool,
}

impl EditInfo {
    /// File `index` (from 1) of `count` in `group`, asked by `title`; no
    /// agent process, baseline, agent-side write or reason to ask.
    pub fn new(group: u64, index: usize, count: usize, title: &str, from_buffer: bool) -> Self {
        EditInfo {
            group,
            index,
            count,
            title: title.to_owned(),
            from_buffer,
            requester_pid: None,
            turn: None,
            agent_writes: false,
            ask_reason: false,
        }
    }
}

/// How a file of the review of changes differs from its baseline.
#[derive(Debug, Clone, Serialize)]
pub struct TurnFile {
    /// `new`, `deleted` or `modified`.
    pub change: &'static str,
    /// When the baseline was taken, in seconds since the epoch.
    pub since: u64,
}

/// Reads the file on disk (off the UI thread) and checks both sides are text.
pub async fn prepare(
    old_file_path: &str,
    new_file_path: &str,
    new_file_contents: String,
) -> Result<Prepared, String> {
    for path in [old_file_path, new_file_path] {
        if !Path::new(path).is_absolute() {
            return Err(format!("path is not absolute: {path:?}"));
        }
    }
    let (original, original_exists) = match tokio::fs::read(old_file_path).await {
        Ok(bytes) => (
            text_of(bytes).ok_or_else(|| format!("{} is not a text file", old_file_path))?,
            true,
        ),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => (String::new(), false),
        Err(error) => return Err(format!("cannot read {}: {error}", old_file_path)),
    };
    if new_file_contents.contains('\0') {
        return Err("the proposed contents are binary".into());
    }
    off_runtime(move || Prepared::of_texts(original, original_exists, new_file_contents)).await
}

/// Both sides from lines already split; large ones marked to be sent in
/// parts, their diff computed while they are (see [`Prepared::take_content`]).
pub async fn prepare_lines(
    original: Lines,
    original_exists: bool,
    proposed: Lines,
) -> Result<Prepared, String> {
    off_runtime(move || Prepared::of_lines(original, original_exists, proposed)).await
}

/// Splitting and diffing take milliseconds: not on the runtime's thread,
/// which serves every agent.
async fn off_runtime(work: impl FnOnce() -> Prepared + Send + 'static) -> Result<Prepared, String> {
    crate::task::spawn_blocking(work)
        .await
        .map_err(|error| format!("preparing the diff failed: {error}"))
}

fn strs(side: &Lines) -> Vec<&str> {
    side.lines.iter().map(String::as_str).collect()
}

fn text_len(lines: &Lines) -> usize {
    lines.lines.iter().map(|l| l.len() + 1).sum()
}

fn text_of(bytes: Vec<u8>) -> Option<String> {
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    /// Prepares a diff of `path` against itself, as pi sends them.
    async fn refusal(path: &str, contents: &str) -> String {
        prepare(path, path, contents.to_owned()).await.unwrap_err()
    }

    #[tokio::test]
    async fn prepare_refuses_what_it_cannot_show() {
        let dir = Scratch::new("prepare");
        std::fs::write(dir.join("bin"), b"a\0b").unwrap();
        let at = |name: &str| dir.join(name).to_str().unwrap().to_owned();
        assert!(refusal("relative.txt", "x").await.contains("not absolute"));
        assert!(refusal(&at(""), "x").await.contains("cannot read"));
        assert!(refusal(&at("bin"), "x").await.contains("not a text file"));
        assert!(refusal(&at("new"), "a\0").await.contains("binary"));
        let new_file = at("missing/new.txt");
        let spec = prepare(&new_file, &new_file, "hi\n".into()).await.unwrap();
        assert!(!spec.original_exists);
        assert_eq!(spec.proposed.lines, vec!["hi".to_string()]);
        assert!(!spec.parts, "small files use Neovim's diff mode");
    }

    #[tokio::test]
    async fn small_files_changed_too_densely_for_diff_mode_come_in_parts() {
        let dir = Scratch::new("dense");
        let path = dir.join("dense.txt");
        let old: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, &old).unwrap();
        let path = path.to_str().unwrap();
        let dense: String = (0..2000)
            .map(|i| format!("line {i}{}\n", if i % 3 == 0 { " changed" } else { "" }))
            .collect();
        let spec = prepare(path, path, dense.clone()).await.unwrap();
        assert!(
            spec.parts,
            "diff mode would stall on 667 hunks in 2,000 lines"
        );
        let sparse = old.replacen("line 1000\n", "changed\n", 1);
        let spec = prepare(path, path, sparse).await.unwrap();
        assert!(!spec.parts, "one change in 2,000 lines is diff mode's");
        let lines = |text: &str| Lines::split(text);
        let spec = prepare_lines(lines(&old), true, lines(&dense))
            .await
            .unwrap();
        assert!(spec.parts, "edits of loaded buffers choose the same way");
    }

    #[tokio::test]
    async fn large_files_come_in_parts() {
        let old: String = (0..40_000).map(|i| format!("line {i}\n")).collect();
        let dir = Scratch::new("large");
        let path = dir.join("big.txt");
        std::fs::write(&path, &old).unwrap();
        let new = old.replacen("line 20000\n", "changed\n", 1);
        let path = path.to_str().unwrap();
        let mut spec = prepare(path, path, new).await.unwrap();
        assert!(spec.parts, "above HOST_DIFF_BYTES the host diffs");
        let content = spec.take_content().unwrap();
        assert_eq!(
            (
                content.original.lines().count(),
                content.proposed.lines().count()
            ),
            (40_000, 40_000)
        );
        assert_eq!(content.proposed.lines().nth(20_000), Some("changed"));
        assert!(spec.original.lines.is_empty() && spec.proposed.lines.is_empty());
        assert!(
            spec.original.eol && spec.proposed.eol,
            "what Lua needs stays"
        );
    }
}
