//! `closeAllDiffTabs {}`: closes this client's diffs, never anyone else's
//! and never the person's own `:diffthis` windows.

use serde_json::{Value, json};

use super::{ToolSpec, text_content};
use crate::client::ClientId;
use crate::diff::pending::DiffOutcome;
use crate::state::State;

pub const SPEC: ToolSpec = ToolSpec {
    name: "closeAllDiffTabs",
    description: "Close every diff tab this agent opened.",
    schema: || json!({"type": "object", "properties": {}}),
};

pub fn run(state: &State, client: ClientId) -> Value {
    let diffs = state.diffs.take_client(client);
    let count = diffs.len();
    for diff in diffs {
        state.finish_diff(diff, DiffOutcome::Rejected { reason: None });
    }
    text_content(&[format!("CLOSED_{count}_DIFF_TABS")])
}
