//! `apply_code_action`: Apply a code action get_code_actions listed, by id.
//! Its edits are shown to the person as diffs (unless approval is off).
//! Actions that only run a command on the language server are not
//! supported.

use serde_json::json;

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};

pub struct ApplyCodeAction;

#[async_trait]
impl Tool for ApplyCodeAction {
    type Args = crate::project::edits::lsp::ApplyArgs;

    const SPEC: Spec = Spec {
        name: "apply_code_action",
        description: "Apply a code action get_code_actions listed, by id. Its edits are shown to the person as diffs (unless approval is off). Actions that only run a command on the language server are not supported.",
        schema: || {
            object(
                json!({"id": {"type": "string", "description": "An id from get_code_actions"}}),
                &["id"],
            )
        },
        waits_for_the_person: true,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::edits::lsp::apply_action(state, project, args).await)
    }
}
