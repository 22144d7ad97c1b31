//! `reformat_file`: Reformat a project file with its language server (LSP
//! formatting). The person reviews the change as a diff unless they turned
//! approval off.

use serde_json::json;

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};

pub struct ReformatFile;

#[async_trait]
impl Tool for ReformatFile {
    type Args = crate::project::edits::lsp::ReformatArgs;

    const SPEC: Spec = Spec {
        name: "reformat_file",
        description: "Reformat a project file with its language server (LSP formatting). The person reviews the change as a diff unless they turned approval off.",
        schema: || {
            object(
                json!({"path": {"type": "string", "description": "Path relative to the project root"}}),
                &["path"],
            )
        },
        waits_for_the_person: true,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::edits::lsp::reformat(state, project, args).await)
    }
}
