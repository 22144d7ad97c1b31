//! `openDiff {filePath, newContent}` shows the same review as pi's and
//! Claude's and is answered at once; how it ends goes out later as
//! `ide/diffAccepted {filePath, content}` (their final text, edits
//! included), `ide/diffRejected {filePath}` (they rejected it) or
//! `ide/diffClosed {filePath}` (they closed it without deciding; the CLIs
//! take it as a rejection). Neovim never writes the file: the CLI does.
//! `closeDiff {filePath, suppressNotification?}` closes it and answers
//! JSON text `{"content": …}`, the proposal as the person left it, so
//! their edits reach the disk. With `suppressNotification` (the person
//! answered in the CLI's own prompt) nothing follows; without it (the CLI
//! takes its diffs back) `ide/diffClosed {filePath, content}` does.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use super::text_result;
use crate::claude_ide::tools::{confine, workspace};
use crate::client::{ClientId, ClientKind};
use crate::diff::pending::DiffOutcome;
use crate::diff::prepare::prepare;
use crate::jsonrpc;
use crate::nvim::seam::LuaCall;
use crate::state::{DiffTarget, State};

/// Why a diff ended when the client closed it: `closeDiff` itself says
/// what follows, the review task nothing.
const CLOSED_BY_CLIENT: &str = "the agent closed the diff";

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
    /// Set when the person answered in the CLI's own prompt: the CLI
    /// resolves the diff itself, and a notification would race it.
    #[serde(default)]
    suppress_notification: Option<bool>,
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
        DiffOutcome::Closed => closed(&file_path, None),
    };
    state.clients.send(client, message);
}

fn rejected(file_path: &str) -> String {
    jsonrpc::notification("ide/diffRejected", json!({"filePath": file_path}))
}

/// `ide/diffClosed`, with the proposal as the person left it when known.
fn closed(file_path: &str, content: Option<&str>) -> String {
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

/// `closeDiff`: the proposal's text as the person left it, then the diff
/// closes and the person is told what became of their edits.
pub async fn close(state: &Arc<State>, client: ClientId, arguments: Value) -> Value {
    let CloseArgs {
        file_path,
        suppress_notification,
    } = match serde_json::from_value(arguments) {
        Ok(args) => args,
        Err(error) => return text_result(format!("closeDiff: {error}"), true),
    };
    let answered_in_prompt = suppress_notification == Some(true);
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
        let kind = state.clients.kind(client);
        let (notice, taken) = notice(kind, answered_in_prompt, content.is_some());
        state.take_back_diff(diff, notice, taken, DiffOutcome::rejected(CLOSED_BY_CLIENT));
        if !answered_in_prompt {
            state
                .clients
                .send(client, closed(&file_path, content.as_deref()));
        }
    }
    text_result(json!({"content": content}).to_string(), false)
}

/// What the person is told when the CLI closed their diff, and whether
/// their edits went with the answer (else Neovim keeps a copy): Gemini
/// CLI writes the text `closeDiff` answers when the person accepted in its
/// prompt; Qwen Code applies its own proposal then; a CLI taking its diffs
/// back without an answer uses neither.
fn notice(
    kind: Option<ClientKind>,
    answered_in_prompt: bool,
    answered_text: bool,
) -> (String, bool) {
    let name = match kind {
        Some(ClientKind::Qwen) => "Qwen Code",
        _ => "Gemini CLI",
    };
    match (answered_in_prompt, kind) {
        (false, _) => (format!("{name} closed the diff"), false),
        (true, Some(ClientKind::Qwen)) => (
            format!(
                "{name} closed the diff (you answered in its prompt; an accept there applies its own proposal)"
            ),
            false,
        ),
        (true, _) => (
            format!("{name} closed the diff (you answered in its prompt)"),
            answered_text,
        ),
    }
}
