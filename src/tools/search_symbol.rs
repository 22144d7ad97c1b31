//! `search_symbol`: Symbols whose name matches q across the workspace, from
//! the language servers (what they have indexed), else from the tree-sitter
//! outline of the open buffers: {name, kind, filePath, line, column},
//! 1-based (columns in UTF-16 code units), the project's own first.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "search_symbol",
    description: "Symbols whose name matches q across the workspace, from the language servers (what they have indexed), else from the tree-sitter outline of the open buffers: {name, kind, filePath, line, column}, 1-based (columns in UTF-16 code units), the project's own first.",
    properties: || {
        json!({
            "q": {"type": "string", "description": "The name, or part of it, to look for"},
            "limit": {"type": "integer", "minimum": 1, "description": "At most this many symbols (default 50)"},
        })
    },
    required: &["q"],
    waits_for_the_person: false,
    run: |state, project, args| Box::pin(super::super::symbol_search::search(state, project, args)),
};
