//! `create_new_file`: Create a project file with the given text
//! (directories included, once the person approved it). Refused when the
//! file exists unless overwrite is true.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct CreateNewFile;

#[async_trait]
impl ProjectTool for CreateNewFile {
    type Args = crate::project::edits::text::CreateArgs;

    const SPEC: Spec = Spec::project(
        "create_new_file",
        "Create a project file with the given text (directories included, once the person approved it). Refused when the file exists unless overwrite is true.",
        || {
            object(
                json!({
                    "pathInProject": {"type": "string", "description": "Path relative to the project root"},
                    "text": {"type": "string", "description": "The file's contents (default empty)"},
                    "overwrite": {"type": "boolean", "description": "Replace an existing file (default false)"},
                }),
                &["pathInProject"],
            )
        },
    ).waiting();

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::edits::text::create_file(state, project, args).await
    }
}
