//! `closeAllDiffTabs {}`: closes this client's diffs, never anyone else's
//! and never the person's own `:diffthis` windows.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{ToolSpec, text_content};
use crate::diffs::DiffOutcome;
use crate::host::Shared;
use crate::hub::ClientId;

pub const SPEC: ToolSpec = ToolSpec {
    name: "closeAllDiffTabs",
    description: "Close every diff tab this agent opened.",
    schema: || json!({"type": "object", "properties": {}}),
};

pub fn run(shared: &Arc<Shared>, client: ClientId) -> Value {
    let diffs = shared.diffs.take_client(client);
    let count = diffs.len();
    for diff in diffs {
        shared.finish_diff(diff, DiffOutcome::Rejected { reason: None });
    }
    text_content(&[format!("CLOSED_{count}_DIFF_TABS")])
}
