//! `getLatestSelection {}`: the last selection (or cursor) in a file, also
//! while the person is in a terminal talking to the agent.

use async_trait::async_trait;
use serde_json::Value;

use super::{Call, NoArgs, Outcome, Spec, Tool, get_current_selection, no_arguments};
use crate::state::State;

pub struct GetLatestSelection;

#[async_trait]
impl Tool for GetLatestSelection {
    type Args = NoArgs;

    const SPEC: Spec = Spec::editor(
        "getLatestSelection",
        "The most recent selection (or cursor) in a file, even while another window is current.",
        no_arguments,
    );

    async fn run(call: &Call<'_>, _args: NoArgs) -> Outcome {
        Ok(run(call.state).await)
    }
}

pub async fn run(state: &State) -> Value {
    let positions = state.editor().current_positions().await;
    get_current_selection::answer(state, positions, "No selection available").await
}
