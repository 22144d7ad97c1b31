//! `get_document_symbols`: The symbols of a file {name, kind, filePath,
//! line, column} (1-based), from the language server, else from the host's
//! tree-sitter outline.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "get_document_symbols",
    description: "The symbols of a file {name, kind, filePath, line, column} (1-based), from the language server, else from the host's tree-sitter outline.",
    properties: || json!({"filePath": {"type": "string", "description": "Path relative to the project root"}}),
    required: &["filePath"],
    waits_for_the_person: false,
    run: |state, project, args| Box::pin(super::super::lsp::document_symbols(state, project, args)),
};
