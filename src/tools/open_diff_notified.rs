//! `openDiff {filePath, newContent}` of the IDE companion protocol shows
//! the same review as pi's and Claude's and is answered at once; how it
//! ends goes out later as `ide/diffAccepted {filePath, content}` (their
//! final text, edits included), `ide/diffRejected {filePath}` (they
//! rejected it) or `ide/diffClosed {filePath}` (they closed it without
//! deciding; the CLIs take it as a rejection). Neovim never writes the
//! file: the CLI does.

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{Call, Outcome, Spec, Tool};
use crate::client::ClientId;
use crate::diff::pending::DiffOutcome;
use crate::diff::prepare::prepare;
use crate::jsonrpc;
use crate::nvim::seam::LuaCall;
use crate::project::workspace::{confine, workspace};
use crate::state::{DiffTarget, State};

pub struct OpenDiffNotified;

#[async_trait]
impl Tool for OpenDiffNotified {
    type Args = OpenArgs;

    const SPEC: Spec = Spec::editor(
        "openDiff",
        "Show a proposed change of a file as a diff in Neovim. Answered at once; how it ends follows as ide/diffAccepted (with the final text), ide/diffRejected or ide/diffClosed (closed without a decision). Neovim never writes the file.",
        || {
            json!({
                "type": "object",
                "properties": {
                    "filePath": {"type": "string", "description": "absolute path of the file"},
                    "newContent": {"type": "string", "description": "the complete proposed text"},
                },
                "required": ["filePath", "newContent"],
            })
        },
    );

    async fn run(call: &Call<'_>, args: OpenArgs) -> Outcome {
        open(call.state, call.client()?, args).await;
        Ok(json!({"content": []}))
    }
}

/// Why a diff ended when the client closed it: `closeDiff` itself says
/// what follows, the review task nothing.
pub const CLOSED_BY_CLIENT: &str = "the agent closed the diff";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenArgs {
    file_path: String,
    new_content: String,
}

/// Checked, then shown by a task of its own.
async fn open(state: &Arc<State>, client: ClientId, args: OpenArgs) {
    let OpenArgs {
        file_path,
        new_content,
    } = args;
    if let Err(why) = confined(state, &file_path).await {
        state.editor().push(LuaCall::Refused {
            message: format!("the agent's diff of {file_path} was refused: {why}"),
        });
        tracing::info!("companion openDiff refused: {why}");
        state.clients().send(client, rejected(&file_path));
        return;
    }
    crate::task::spawn(review(state.clone(), client, file_path, new_content));
}

/// Shows the diff, waits for the decision and tells the client.
async fn review(state: Arc<State>, client: ClientId, file_path: String, new_content: String) {
    let outcome = match prepare(&file_path, &file_path, new_content).await {
        Ok(sides) => {
            let target = DiffTarget {
                tab_name: file_path.clone(),
                path: file_path.clone(),
                original_path: file_path.clone(),
                edit: None,
            };
            state.show_diff(client, target, sides).await
        }
        Err(reason) => DiffOutcome::rejected(reason),
    };
    let message = match outcome {
        DiffOutcome::Accepted(content) => jsonrpc::notification(
            "ide/diffAccepted",
            json!({"filePath": file_path, "content": content}),
        ),
        DiffOutcome::Rejected { reason } if reason.as_deref() == Some(CLOSED_BY_CLIENT) => return,
        DiffOutcome::Rejected { .. } | DiffOutcome::Declined(_) => rejected(&file_path),
        DiffOutcome::Closed => closed(&file_path, None),
    };
    state.clients().send(client, message);
}

fn rejected(file_path: &str) -> String {
    jsonrpc::notification("ide/diffRejected", json!({"filePath": file_path}))
}

/// `ide/diffClosed`, with the proposal as the person left it when known.
pub fn closed(file_path: &str, content: Option<&str>) -> String {
    let mut params = json!({"filePath": file_path});
    if let Some(content) = content {
        params["content"] = json!(content);
    }
    jsonrpc::notification("ide/diffClosed", params)
}

/// Whether `file_path` leads into the workspace folder.
async fn confined(state: &State, file_path: &str) -> Result<(), String> {
    let root = workspace(state).await?;
    confine(&root, file_path).map(|_| ())
}
