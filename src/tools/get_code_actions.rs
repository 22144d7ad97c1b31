//! `get_code_actions`: The language servers' code actions (quick fixes,
//! refactorings) at a 1-based position or range, with the diagnostics
//! there: [{id, title, kind}]. apply_code_action applies one.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "get_code_actions",
    description: "The language servers' code actions (quick fixes, refactorings) at a 1-based position or range, with the diagnostics there: [{id, title, kind}]. apply_code_action applies one.",
    properties: || {
        json!({
            "filePath": {"type": "string", "description": "Path relative to the project root"},
            "line": {"type": "integer", "minimum": 1, "description": "1-based line"},
            "column": {"type": "integer", "minimum": 1, "description": "1-based column (UTF-16 code units)"},
            "endLine": {"type": "integer", "minimum": 1, "description": "1-based last line of a range (default: line)"},
            "endColumn": {"type": "integer", "minimum": 1, "description": "1-based column where the range ends (default: column)"},
        })
    },
    required: &["filePath", "line", "column"],
    waits_for_the_person: false,
    run: |state, project, args| Box::pin(super::super::edits::lsp::code_actions(state, project, args)),
};
