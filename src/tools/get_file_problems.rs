//! `get_file_problems`: Problems (diagnostics from language servers and
//! anything else in vim.diagnostic) of one file, loading it if needed and
//! waiting a few seconds at most for its language servers' first
//! diagnostics; lines and columns are 1-based (columns in UTF-16 code
//! units).

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "get_file_problems",
    description: "Problems (diagnostics from language servers and anything else in vim.diagnostic) of one file, loading it if needed and waiting a few seconds at most for its language servers' first diagnostics; lines and columns are 1-based (columns in UTF-16 code units).",
    properties: || {
        json!({
            "filePath": {"type": "string", "description": "Path relative to the project root"},
            "errorsOnly": {"type": "boolean", "description": "Only errors, no warnings or hints (default true)"},
        })
    },
    required: &["filePath"],
    waits_for_the_person: false,
    run: |state, project, args| Box::pin(super::super::problems::file_problems(state, project, args)),
};
