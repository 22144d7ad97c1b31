//! `list_directory_tree`: The tree of a project directory, as indented text
//! and as entries {path, type, depth}; .gitignore honoured.

use serde_json::json;

use super::Tool;
use super::super::search::timeout_schema;

pub const TOOL: Tool = Tool {
    name: "list_directory_tree",
    description: "The tree of a project directory, as indented text and as entries {path, type, depth}; .gitignore honoured.",
    properties: || {
        json!({
            "directoryPath": {"type": "string", "description": "Directory relative to the project root (`.` for the root)"},
            "maxDepth": {"type": "integer", "minimum": 1, "description": "Levels shown below the directory (default 5)"},
            "timeout": timeout_schema(),
        })
    },
    required: &["directoryPath"],
    waits_for_the_person: false,
    run: |_state, project, args| Box::pin(super::super::search::tree(project, args)),
};
