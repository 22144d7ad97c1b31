//! `get_file_text_by_path`: The text of a project file as Neovim has it:
//! the buffer's text with unsaved edits when the file is loaded, else the
//! file on disk.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "get_file_text_by_path",
    description: "The text of a project file as Neovim has it: the buffer's text with unsaved edits when the file is loaded, else the file on disk.",
    properties: || {
        json!({
            "pathInProject": {"type": "string", "description": "Path relative to the project root"},
            "maxLinesCount": {"type": "integer", "minimum": 1, "description": "Most lines returned (default 1000)"},
            "truncateMode": {
                "type": "string",
                "enum": ["START", "MIDDLE", "END", "NONE"],
                "description": "Which lines to keep when the file is longer: START keeps the first, END the last, MIDDLE both ends, NONE all (default START)",
            },
        })
    },
    required: &["pathInProject"],
    waits_for_the_person: false,
    run: |state, project, args| Box::pin(super::super::files::file_text(state, project, args)),
};
