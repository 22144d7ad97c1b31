//! `open_file_in_editor`: Show a project file in Neovim, in the last used
//! file window, optionally with the cursor at a 1-based line and column.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct OpenFileInEditor;

#[async_trait]
impl ProjectTool for OpenFileInEditor {
    type Args = crate::project::files::OpenArgs;

    const SPEC: Spec = Spec::project(
        "open_file_in_editor",
        "Show a project file in Neovim, in the last used file window, optionally with the cursor at a 1-based line and column.",
        || {
            object(
                json!({
                    "filePath": {"type": "string", "description": "Path relative to the project root"},
                    "line": {"type": "integer", "minimum": 1, "description": "1-based line for the cursor"},
                    "column": {"type": "integer", "minimum": 1, "description": "1-based column (UTF-16 code units) for the cursor; needs line"},
                }),
                &["filePath"],
            )
        },
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::files::open_in_editor(state, project, args).await
    }
}
