//! `close_tab {tab_name}`: the agent is done with a diff. pi sends it after
//! every answered `openDiff` (usually already closed); Claude also sends it
//! when the person answered in the terminal, so a pending diff is rejected.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Call, Tool, ToolError, ToolSpec, arguments, text_content};
use crate::client::ClientId;
use crate::diff::pending::DiffOutcome;
use crate::state::State;

const SPEC: ToolSpec = ToolSpec {
    name: "close_tab",
    description: "Close the diff tab with this name if it is still open.",
    schema: || {
        json!({
            "type": "object",
            "properties": {"tab_name": {"type": "string", "description": "tab_name given to openDiff"}},
            "required": ["tab_name"],
        })
    },
};

pub const TOOL: Tool = Tool {
    spec: SPEC,
    waits_for_the_person: false,
    parse: |args| Ok(Box::new(parse(args)?)),
};

#[async_trait]
impl Call for Args {
    async fn run(self: Box<Self>, state: &State, client: ClientId) -> Value {
        run(state, client, *self)
    }
}

#[derive(Debug, Deserialize)]
pub struct Args {
    tab_name: String,
}

pub fn parse(args: Value) -> Result<Args, ToolError> {
    arguments("close_tab", args)
}

pub fn run(state: &State, client: ClientId, args: Args) -> Value {
    if let Some(diff) = state.diffs.take_tab(client, &args.tab_name) {
        state.finish_diff(diff, DiffOutcome::Rejected { reason: None });
    }
    text_content(&["TAB_CLOSED"])
}
