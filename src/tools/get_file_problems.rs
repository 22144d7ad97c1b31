//! `get_file_problems`: Problems (diagnostics from language servers and
//! anything else in vim.diagnostic) of one file, loading it if needed and
//! waiting a few seconds at most for its language servers' first
//! diagnostics; lines and columns are 1-based (columns in UTF-16 code
//! units).

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct GetFileProblems;

#[async_trait]
impl ProjectTool for GetFileProblems {
    type Args = crate::project::problems::FileArgs;

    const SPEC: Spec = Spec::project(
        "get_file_problems",
        "Problems (diagnostics from language servers and anything else in vim.diagnostic) of one file, loading it if needed and waiting a few seconds at most for its language servers' first diagnostics; lines and columns are 1-based (columns in UTF-16 code units).",
        || {
            object(
                json!({
                    "filePath": {"type": "string", "description": "Path relative to the project root"},
                    "errorsOnly": {"type": "boolean", "description": "Only errors, no warnings or hints (default true)"},
                }),
                &["filePath"],
            )
        },
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::problems::file_problems(state, project, args).await
    }
}
