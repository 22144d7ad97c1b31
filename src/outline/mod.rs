//! Tree-sitter context for suggestions, computed in the host off Neovim's UI
//! thread.
//!
//! * [`languages`] – grammars compiled in, definition and comment node kinds.
//! * [`document`]  – a buffer mirrored from lines events, reparsed incrementally.
//! * [`definitions`] – outline, enclosing scope and "in a comment?" from a tree.
//! * [`worker`]    – the thread that owns every document.

pub mod definitions;
pub mod document;
pub mod languages;
pub mod worker;

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

/// The context at (`row`, byte `col`), or `None` for a filetype the host
/// has no grammar for.
pub fn context(
    document: &mut Document,
    row: usize,
    col: usize,
    outline_bytes: usize,
) -> Option<Context> {
    let (Some((tree, spec)), lines) = document.parsed() else {
        return None;
    };
    let row = row.min(lines.len().saturating_sub(1));
    let entries = definitions::entries(tree, spec, lines);
    let scope: Vec<String> = definitions::enclosing(&entries, row)
        .into_iter()
        .map(definitions::Entry::render)
        .collect();
    Some(Context {
        outline: definitions::render_centred(&entries, row, outline_bytes),
        enclosing_scope: scope.join("\n"),
        cursor_in_comment: definitions::in_comment(tree, spec, row, col),
    })
}

#[cfg(test)]
mod tests;
