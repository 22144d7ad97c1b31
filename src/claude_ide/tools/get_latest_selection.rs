//! `getLatestSelection {}`: the last selection (or cursor) in a file, also
//! while the person is in a terminal talking to the agent.

use serde_json::{Value, json};

use super::{ToolSpec, get_current_selection};
use crate::state::State;

pub const SPEC: ToolSpec = ToolSpec {
    name: "getLatestSelection",
    description: "The most recent selection (or cursor) in a file, even while another window is current.",
    schema: || json!({"type": "object", "properties": {}}),
};

pub async fn run(state: &State) -> Value {
    let positions = state.editor.current_positions().await;
    get_current_selection::answer(state, positions, "No selection available").await
}
