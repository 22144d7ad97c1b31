//! `close_tab {tab_name}`: the agent is done with a diff. pi sends it after
//! every answered `openDiff` (usually already closed); Claude also sends it
//! when the person answered in the terminal, so a pending diff is rejected.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Call, Outcome, Spec, Tool, text_content};
use crate::client::ClientId;
use crate::diff::pending::DiffOutcome;
use crate::state::State;

pub struct CloseTab;

#[async_trait]
impl Tool for CloseTab {
    type Args = Args;

    const SPEC: Spec = Spec::editor(
        "close_tab",
        "Close the diff tab with this name if it is still open.",
        || {
            json!({
                "type": "object",
                "properties": {"tab_name": {"type": "string", "description": "tab_name given to openDiff"}},
                "required": ["tab_name"],
            })
        },
    );

    async fn run(call: &Call<'_>, args: Args) -> Outcome {
        Ok(run(call.state, call.client()?, args))
    }
}

#[derive(Debug, Deserialize)]
pub struct Args {
    tab_name: String,
}

pub fn run(state: &State, client: ClientId, args: Args) -> Value {
    if let Some(diff) = state.diffs().take_tab(client, &args.tab_name) {
        state.finish_diff(diff, DiffOutcome::Rejected { reason: None });
    }
    text_content(&["TAB_CLOSED"])
}
