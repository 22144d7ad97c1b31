//! `find_files_by_name_keyword`: Project files whose name contains a
//! keyword (case-insensitive), relative to the project root; .gitignore
//! honoured.

use serde_json::json;

use super::Tool;
use super::super::search::timeout_schema;

pub const TOOL: Tool = Tool {
    name: "find_files_by_name_keyword",
    description: "Project files whose name contains a keyword (case-insensitive), relative to the project root; .gitignore honoured.",
    properties: || {
        json!({
            "nameKeyword": {"type": "string", "description": "Part of the file name"},
            "fileCountLimit": {"type": "integer", "minimum": 1, "description": "Most files returned (default 1000)"},
            "timeout": timeout_schema(),
        })
    },
    required: &["nameKeyword"],
    waits_for_the_person: false,
    run: |_state, project, args| Box::pin(super::super::search::by_name_keyword(project, args)),
};
