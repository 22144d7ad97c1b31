//! `apply_code_action`: Apply a code action get_code_actions listed, by id.
//! Its edits are shown to the person as diffs (unless approval is off).
//! Actions that only run a command on the language server are not
//! supported.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct ApplyCodeAction;

#[async_trait]
impl ProjectTool for ApplyCodeAction {
    type Args = crate::project::edits::lsp::ApplyArgs;

    const SPEC: Spec = Spec::project(
        "apply_code_action",
        "Apply a code action get_code_actions listed, by id. Its edits are shown to the person as diffs (unless approval is off). Actions that only run a command on the language server are not supported.",
        || {
            object(
                json!({"id": {"type": "string", "description": "An id from get_code_actions"}}),
                &["id"],
            )
        },
    ).waiting();

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::edits::lsp::apply_action(state, project, args).await
    }
}
