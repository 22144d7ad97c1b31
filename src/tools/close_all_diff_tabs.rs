//! `closeAllDiffTabs {}`: closes this client's diffs, never anyone else's
//! and never the person's own `:diffthis` windows.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, Tool, ToolSpec, text_content};
use crate::client::ClientId;
use crate::diff::pending::DiffOutcome;
use crate::state::State;

const SPEC: ToolSpec = ToolSpec {
    name: "closeAllDiffTabs",
    description: "Close every diff tab this agent opened.",
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
    async fn run(self: Box<Self>, state: &State, client: ClientId) -> Value {
        run(state, client)
    }
}

pub fn run(state: &State, client: ClientId) -> Value {
    let diffs = state.diffs.take_client(client);
    let count = diffs.len();
    for diff in diffs {
        state.finish_diff(diff, DiffOutcome::Rejected { reason: None });
    }
    text_content(&[format!("CLOSED_{count}_DIFF_TABS")])
}
