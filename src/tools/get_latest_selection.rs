//! `getLatestSelection {}`: the last selection (or cursor) in a file, also
//! while the person is in a terminal talking to the agent.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, NoArgs, Outcome, Spec, Tool, get_current_selection};
use crate::state::State;

pub struct GetLatestSelection;

#[async_trait]
impl Tool for GetLatestSelection {
    type Args = NoArgs;

    const SPEC: Spec = Spec {
        name: "getLatestSelection",
        description: "The most recent selection (or cursor) in a file, even while another window is current.",
        schema: || json!({"type": "object", "properties": {}}),
        waits_for_the_person: false,
        in_project: false,
    };

    async fn run(call: &Call<'_>, _args: NoArgs) -> Outcome {
        Ok(run(call.state).await)
    }
}

pub async fn run(state: &State) -> Value {
    let positions = state.editor.current_positions().await;
    get_current_selection::answer(state, positions, "No selection available").await
}
