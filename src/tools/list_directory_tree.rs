//! `list_directory_tree`: The tree of a project directory, as indented text
//! and as entries {path, type, depth}; .gitignore honoured.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::search::timeout_schema;
use crate::project::{Answer, Project};
use crate::state::State;

pub struct ListDirectoryTree;

#[async_trait]
impl ProjectTool for ListDirectoryTree {
    type Args = crate::project::search::TreeArgs;

    const SPEC: Spec = Spec::project(
        "list_directory_tree",
        "The tree of a project directory, as indented text and as entries {path, type, depth}; .gitignore honoured.",
        || {
            object(
                json!({
                    "directoryPath": {"type": "string", "description": "Directory relative to the project root (`.` for the root)"},
                    "maxDepth": {"type": "integer", "minimum": 1, "description": "Levels shown below the directory (default 5)"},
                    "timeout": timeout_schema(),
                }),
                &["directoryPath"],
            )
        },
    );

    async fn run(_state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::search::tree(project, args).await
    }
}
