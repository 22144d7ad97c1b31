//! `find_files_by_glob`: Project files whose path relative to the project
//! root matches a glob (`src/**/*.rs`; a pattern without `/` matches file
//! names at any depth). Files ignored by .gitignore are left out unless
//! addExcluded.

use serde_json::json;

use super::Tool;
use super::super::search::timeout_schema;

pub const TOOL: Tool = Tool {
    name: "find_files_by_glob",
    description: "Project files whose path relative to the project root matches a glob (`src/**/*.rs`; a pattern without `/` matches file names at any depth). Files ignored by .gitignore are left out unless addExcluded.",
    properties: || {
        json!({
            "globPattern": {"type": "string", "description": "Glob relative to the project root"},
            "subDirectoryRelativePath": {"type": "string", "description": "Search only this directory, relative to the project root"},
            "addExcluded": {"type": "boolean", "description": "Also files ignored by .gitignore (default false)"},
            "fileCountLimit": {"type": "integer", "minimum": 1, "description": "Most files returned (default 1000)"},
            "timeout": timeout_schema(),
        })
    },
    required: &["globPattern"],
    waits_for_the_person: false,
    run: |_state, project, args| Box::pin(super::super::search::by_glob(project, args)),
};
