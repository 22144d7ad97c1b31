//! `create_new_file`: Create a project file with the given text
//! (directories included, once the person approved it). Refused when the
//! file exists unless overwrite is true.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "create_new_file",
    description: "Create a project file with the given text (directories included, once the person approved it). Refused when the file exists unless overwrite is true.",
    properties: || {
        json!({
            "pathInProject": {"type": "string", "description": "Path relative to the project root"},
            "text": {"type": "string", "description": "The file's contents (default empty)"},
            "overwrite": {"type": "boolean", "description": "Replace an existing file (default false)"},
        })
    },
    required: &["pathInProject"],
    waits_for_the_person: true,
    run: |state, project, args| Box::pin(super::super::edits::text::create_file(state, project, args)),
};
