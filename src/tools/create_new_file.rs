//! `create_new_file`: Create a project file with the given text
//! (directories included, once the person approved it). Refused when the
//! file exists unless overwrite is true.

use serde_json::json;

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};

pub struct CreateNewFile;

#[async_trait]
impl Tool for CreateNewFile {
    type Args = crate::project::edits::text::CreateArgs;

    const SPEC: Spec = Spec {
        name: "create_new_file",
        description: "Create a project file with the given text (directories included, once the person approved it). Refused when the file exists unless overwrite is true.",
        schema: || {
            object(
                json!({
                    "pathInProject": {"type": "string", "description": "Path relative to the project root"},
                    "text": {"type": "string", "description": "The file's contents (default empty)"},
                    "overwrite": {"type": "boolean", "description": "Replace an existing file (default false)"},
                }),
                &["pathInProject"],
            )
        },
        waits_for_the_person: true,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::edits::text::create_file(state, project, args).await)
    }
}
