//! `openDiff`: shows the agent's proposal next to the file on disk and waits
//! for the person. Never answers with a JSON-RPC error — pi would run the edit
//! unapproved — and never writes the file: the agent writes it after
//! `FILE_SAVED`. A path that leads out of the workspace folder (or a
//! workspace that is no project) is `DIFF_REJECTED`, and the person told.

use async_trait::async_trait;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::{Call, Outcome, Spec, Tool, text_content};
use crate::client::ClientId;
use crate::diff::pending::DiffOutcome;
use crate::diff::prepare::prepare;
use crate::nvim::seam::LuaCall;
use crate::project::workspace::{confine, workspace};
use crate::state::{DiffTarget, State};

pub struct OpenDiff;

#[async_trait]
impl Tool for OpenDiff {
    type Args = Request;

    const SPEC: Spec = Spec::editor(
        "openDiff",
        "Show a proposed change as a diff in Neovim and wait until the person accepts or rejects it.",
        || {
            json!({
                "type": "object",
                "properties": {
                    "old_file_path": {"type": "string", "description": "absolute path of the file on disk"},
                    "new_file_path": {"type": "string", "description": "absolute path the contents are for"},
                    "new_file_contents": {"type": "string", "description": "complete proposed contents"},
                    "tab_name": {"type": "string", "description": "identifies this diff"},
                },
                "required": ["old_file_path", "new_file_path", "new_file_contents", "tab_name"],
            })
        },
    ).waiting();

    async fn run(call: &Call<'_>, request: Request) -> Outcome {
        Ok(run(call.state, call.client()?, request).await)
    }
}

#[derive(Debug, Deserialize)]
pub struct Args {
    old_file_path: String,
    new_file_path: String,
    new_file_contents: String,
    tab_name: String,
}

/// Checked `openDiff` arguments; bad ones still need a `DIFF_REJECTED`
/// naming the tab, never a JSON-RPC error, so any arguments parse.
#[derive(Debug)]
pub struct Request {
    tab_name: String,
    args: Result<Args, String>,
}

impl<'de> Deserialize<'de> for Request {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // The proposal's text is moved, not copied.
        let args = Value::deserialize(deserializer)?;
        let tab_name = args
            .get("tab_name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let args = serde_json::from_value(args)
            .map_err(|error| format!("invalid openDiff arguments: {error}"));
        Ok(Request { tab_name, args })
    }
}

pub async fn run(state: &State, client: ClientId, request: Request) -> Value {
    let Args {
        old_file_path,
        new_file_path,
        new_file_contents,
        tab_name,
    } = match request.args {
        Ok(args) => args,
        Err(reason) => return reply(&request.tab_name, DiffOutcome::rejected(reason)),
    };
    if let Err(why) = confined(state, &old_file_path, &new_file_path).await {
        state.editor().push(LuaCall::Refused {
            message: format!("the agent's diff {tab_name} was refused: {why}"),
        });
        tracing::info!("openDiff {tab_name} refused: {why}");
        return reply(&tab_name, DiffOutcome::rejected(why));
    }
    let large = new_file_contents.len() > crate::memory::LARGE_TEXT_BYTES;
    // Taken, not copied: a large proposal becomes the diff's proposed side.
    let prepared = prepare(&old_file_path, &new_file_path, new_file_contents).await;
    let outcome = match prepared {
        Ok(sides) => {
            let target = DiffTarget {
                tab_name: tab_name.clone(),
                path: new_file_path,
                original_path: old_file_path,
                edit: None,
            };
            state.show_diff(client, target, sides).await
        }
        Err(reason) => DiffOutcome::rejected(reason),
    };
    if let DiffOutcome::Rejected {
        reason: Some(reason),
    } = &outcome
    {
        tracing::info!("openDiff {tab_name} rejected: {reason}");
    }
    if large {
        crate::memory::release_soon();
    }
    reply(&tab_name, outcome)
}

/// Whether both paths lead into the workspace folder.
async fn confined(state: &State, old: &str, new: &str) -> Result<(), String> {
    let root = workspace(state).await?;
    confine(&root, old)?;
    if new != old {
        confine(&root, new)?;
    }
    Ok(())
}

/// `FILE_SAVED` + final text, or `DIFF_REJECTED` + tab name (+ why, if known).
fn reply(tab_name: &str, outcome: DiffOutcome) -> Value {
    match outcome {
        DiffOutcome::Accepted(text) => text_content(&["FILE_SAVED", text.as_str()]),
        DiffOutcome::Rejected { reason: None } | DiffOutcome::Closed | DiffOutcome::Declined(_) => {
            text_content(&["DIFF_REJECTED", tab_name])
        }
        DiffOutcome::Rejected {
            reason: Some(reason),
        } => text_content(&["DIFF_REJECTED", tab_name, reason.as_str()]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_have_the_shapes_clients_parse() {
        assert_eq!(
            reply("t", DiffOutcome::Accepted("x\n".into()))["content"][1]["text"],
            "x\n"
        );
        assert_eq!(
            reply("t", DiffOutcome::Accepted(String::new()))["content"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let rejected = reply("t", DiffOutcome::Rejected { reason: None });
        assert_eq!(rejected["content"][0]["text"], "DIFF_REJECTED");
        assert_eq!(rejected["content"][1]["text"], "t");
        assert_eq!(
            reply("t", DiffOutcome::rejected("why"))["content"][2]["text"],
            "why"
        );
    }
}
