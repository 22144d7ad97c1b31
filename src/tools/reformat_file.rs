//! `reformat_file`: Reformat a project file with its language server (LSP
//! formatting). The person reviews the change as a diff unless they turned
//! approval off.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct ReformatFile;

#[async_trait]
impl ProjectTool for ReformatFile {
    type Args = crate::project::edits::lsp::ReformatArgs;

    const SPEC: Spec = Spec::project(
        "reformat_file",
        "Reformat a project file with its language server (LSP formatting). The person reviews the change as a diff unless they turned approval off.",
        || {
            object(
                json!({"path": {"type": "string", "description": "Path relative to the project root"}}),
                &["path"],
            )
        },
    ).waiting();

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::edits::lsp::reformat(state, project, args).await
    }
}
