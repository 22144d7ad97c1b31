//! `getLatestSelection {}`: the last selection (or cursor) in a file, also
//! while the person is in a terminal talking to the agent.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, Tool, ToolSpec, get_current_selection};
use crate::client::ClientId;
use crate::state::State;

const SPEC: ToolSpec = ToolSpec {
    name: "getLatestSelection",
    description: "The most recent selection (or cursor) in a file, even while another window is current.",
    schema: || json!({"type": "object", "properties": {}}),
};

pub const TOOL: Tool = Tool {
    spec: SPEC,
    waits_for_the_person: false,
    parse: |_| Ok(Box::new(Args)),
};

/// The tool takes no arguments.
#[derive(Debug)]
pub struct Args;

#[async_trait]
impl Call for Args {
    async fn run(self: Box<Self>, state: &State, _client: ClientId) -> Value {
        run(state).await
    }
}

pub async fn run(state: &State) -> Value {
    let positions = state.editor.current_positions().await;
    get_current_selection::answer(state, positions, "No selection available").await
}
