//! `closeAllDiffTabs {}`: closes this client's diffs, never anyone else's
//! and never the person's own `:diffthis` windows.

use async_trait::async_trait;
use serde_json::Value;

use super::{Call, NoArgs, Outcome, Spec, Tool, no_arguments, text_content};
use crate::client::ClientId;
use crate::diff::pending::DiffOutcome;
use crate::state::State;

pub struct CloseAllDiffTabs;

#[async_trait]
impl Tool for CloseAllDiffTabs {
    type Args = NoArgs;

    const SPEC: Spec = Spec::editor(
        "closeAllDiffTabs",
        "Close every diff tab this agent opened.",
        no_arguments,
    );

    async fn run(call: &Call<'_>, _args: NoArgs) -> Outcome {
        Ok(run(call.state, call.client()?))
    }
}

pub fn run(state: &State, client: ClientId) -> Value {
    let diffs = state.diffs().take_client(client);
    let count = diffs.len();
    for diff in diffs {
        state.finish_diff(diff, DiffOutcome::Rejected { reason: None });
    }
    text_content(&[format!("CLOSED_{count}_DIFF_TABS")])
}
