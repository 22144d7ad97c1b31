//! Tree-sitter context for suggestions, computed in the host off Neovim's UI
//! thread: the plugin's outline engine (the MCP symbol tools use it too).
//! Lua's `suggest/fallback_context.lua` only covers, for a suggestion the
//! person asked for, the filetypes whose grammar only Neovim has (its own
//! parsers and those the person installed), which the host cannot load.
//!
//! * [`languages`] – grammars compiled in, definition and comment node kinds.
//! * [`document`]  – a buffer mirrored from lines events, reparsed incrementally.
//! * [`definitions`] – outline, enclosing scope and "in a comment?" from a tree.
//! * [`worker`]    – the thread that owns every document.

pub mod definitions;
pub mod document;
pub mod languages;
pub mod worker;

use std::time::Duration;

use document::Document;

/// Default cap of an outline, in bytes.
pub const OUTLINE_BYTES: usize = 12_000;

/// What the syntax tree says about a cursor position.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// Definitions of the file, capped and centred on the cursor.
    pub outline: String,
    /// The definitions around the cursor, outermost first; empty at top level.
    pub enclosing_scope: String,
    pub cursor_in_comment: bool,
}

/// How long a request may wait for a reparse before it uses the last
/// complete tree; the rest of the parse happens while the worker is idle.
pub const REPARSE_BUDGET: Duration = Duration::from_millis(6);

/// The context at (`row`, byte `col`) after reparsing for at most
/// `budget`, or `None` for a filetype the host has no grammar for.
pub fn context(
    document: &mut Document,
    row: usize,
    col: usize,
    outline_bytes: usize,
    budget: Duration,
) -> Option<Context> {
    document.focus(row);
    document.parse(budget);
    let beyond = document.beyond_window();
    let (Some((tree, spec)), lines) = document.parsed() else {
        return None;
    };
    let row = row.min(lines.len().saturating_sub(1));
    Some(Context {
        outline: definitions::outline(tree, spec, lines, row, outline_bytes, beyond),
        enclosing_scope: definitions::enclosing(tree, spec, lines, row, col).join("\n"),
        cursor_in_comment: definitions::in_comment(tree, spec, row, col),
    })
}

#[cfg(test)]
mod tests;
