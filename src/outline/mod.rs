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

/// How much context a suggestion request carries.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub lines_before: usize,
    pub lines_after: usize,
    pub outline_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            lines_before: 20,
            lines_after: 10,
            outline_bytes: 12_000,
        }
    }
}

/// The editor-side fields of a `getSuggestions` request.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub cursor_before: String,
    pub cursor_after: String,
    /// `None` when the host has no grammar for the filetype.
    pub outline: Option<String>,
    pub enclosing_scope: Option<String>,
    pub cursor_in_comment: bool,
}

/// Builds the context around (`row`, byte `col`).
pub fn context(document: &mut Document, row: usize, col: usize, limits: Limits) -> Context {
    let lines = document.lines();
    let row = row.min(lines.len() - 1);
    let line = &lines[row];
    let mut col = col.min(line.len());
    while !line.is_char_boundary(col) {
        col -= 1;
    }
    let first = row.saturating_sub(limits.lines_before);
    let mut cursor_before = lines[first..row].iter().fold(String::new(), |mut text, l| {
        text.push_str(l);
        text.push('\n');
        text
    });
    cursor_before.push_str(&line[..col]);
    let last = (row + 1 + limits.lines_after).min(lines.len());
    let mut cursor_after = line[col..].to_owned();
    for l in &lines[row + 1..last] {
        cursor_after.push('\n');
        cursor_after.push_str(l);
    }
    let mut context = Context {
        cursor_before,
        cursor_after,
        outline: None,
        enclosing_scope: None,
        cursor_in_comment: false,
    };
    if let (Some((tree, spec)), lines) = document.parsed() {
        let entries = definitions::entries(tree, spec, lines);
        let scope: Vec<String> = definitions::enclosing(&entries, row)
            .into_iter()
            .map(definitions::Entry::render)
            .collect();
        context.outline = Some(definitions::render_centred(
            &entries,
            row,
            limits.outline_bytes,
        ));
        context.enclosing_scope = (!scope.is_empty()).then(|| scope.join("\n"));
        context.cursor_in_comment = definitions::in_comment(tree, spec, row, col);
    }
    context
}

#[cfg(test)]
mod tests;
