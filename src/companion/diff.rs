//! `openDiff {filePath, newContent}` shows the same review as pi's and
//! Claude's and is answered at once; the person's decision goes out later
//! as `ide/diffAccepted {filePath, content}` (their final text, edits
//! included) or `ide/diffRejected {filePath}`. Neovim never writes the
//! file: the CLI does. `closeDiff {filePath}` (the person decided in the
//! CLI's own prompt) closes it and answers JSON text `{"content": …}`, the
//! proposal as the person left it, so their edits reach the disk.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use super::text_result;
use crate::claude_ide::tools::{confine, workspace};
use crate::client::ClientId;
use crate::diff::pending::DiffOutcome;
use crate::diff::prepare::prepare;
use crate::jsonrpc;
use crate::nvim::seam::LuaCall;
use crate::state::{DiffTarget, State};

/// Why a diff closed when the client closed it: no `ide/diffRejected`
/// follows (the CLI resolves the diff itself, and a late rejection would
/// race its accept).
const CLOSED_BY_CLIENT: &str = "the agent closed the diff (the person answered in its prompt)";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OpenArgs {
    file_path: String,
    new_content: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CloseArgs {
    file_path: String,
}

/// `openDiff`: checked, then shown by a task of its own; the answer is empty.
pub async fn open(state: &Arc<State>, client: ClientId, arguments: Value) -> Value {
    let OpenArgs {
        file_path,
        new_content,
    } = match serde_json::from_value(arguments) {
        Ok(args) => args,
        Err(error) => return text_result(format!("openDiff: {error}"), true),
    };
    if let Err(why) = confined(state, &file_path).await {
        state.editor.push(LuaCall::Refused {
            message: format!("the agent's diff of {file_path} was refused: {why}"),
        });
        tracing::info!("companion openDiff refused: {why}");
        state.clients.send(client, rejected(&file_path));
        return json!({"content": []});
    }
    crate::task::spawn(review(state.clone(), client, file_path, new_content));
    json!({"content": []})
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
        DiffOutcome::Rejected { .. } => rejected(&file_path),
    };
    state.clients.send(client, message);
}

fn rejected(file_path: &str) -> String {
    jsonrpc::notification("ide/diffRejected", json!({"filePath": file_path}))
}

/// Whether `file_path` leads into the workspace folder.
async fn confined(state: &State, file_path: &str) -> Result<(), String> {
    let root = workspace(state).await?;
    confine(&root, file_path).map(|_| ())
}

/// `closeDiff`: the proposal's text as the person left it, then the diff
/// closes (their edits also kept in a buffer, as for any diff the agent
/// takes back).
pub async fn close(state: &Arc<State>, client: ClientId, arguments: Value) -> Value {
    let CloseArgs { file_path } = match serde_json::from_value(arguments) {
        Ok(args) => args,
        Err(error) => return text_result(format!("closeDiff: {error}"), true),
    };
    let Some(id) = state.diffs.find_tab(client, &file_path) else {
        return text_result(json!({"content": null}).to_string(), false);
    };
    let content = match state.editor.query::<String>(LuaCall::DiffText { id }).await {
        Ok(text) => text,
        Err(error) => {
            tracing::warn!("cannot read the proposal of {file_path}: {error}");
            None
        }
    };
    if let Some(diff) = state.diffs.take(id) {
        state.finish_diff(diff, DiffOutcome::rejected(CLOSED_BY_CLIENT));
    }
    text_result(json!({"content": content}).to_string(), false)
}
