//! `open_file_in_editor`: Show a project file in Neovim, in the last used
//! file window, optionally with the cursor at a 1-based line and column.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "open_file_in_editor",
    description: "Show a project file in Neovim, in the last used file window, optionally with the cursor at a 1-based line and column.",
    properties: || {
        json!({
            "filePath": {"type": "string", "description": "Path relative to the project root"},
            "line": {"type": "integer", "minimum": 1, "description": "1-based line for the cursor"},
            "column": {"type": "integer", "minimum": 1, "description": "1-based column (UTF-16 code units) for the cursor; needs line"},
        })
    },
    required: &["filePath"],
    waits_for_the_person: false,
    run: |state, project, args| Box::pin(super::super::files::open_in_editor(state, project, args)),
};
