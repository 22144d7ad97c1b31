//! `closeDiff {filePath, suppressNotification?}` of the IDE companion
//! protocol closes the diff `openDiff` showed and answers JSON text
//! `{"content": …}`, the proposal as the person left it, so their edits
//! reach the disk. With `suppressNotification` (the person answered in the
//! CLI's own prompt) nothing follows; without it (the CLI takes its diffs
//! back) `ide/diffClosed {filePath, content}` does.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::open_diff_notified::{CLOSED_BY_CLIENT, closed};
use super::{Call, Outcome, Spec, Tool, text_content};
use crate::client::{ClientId, ClientKind};
use crate::diff::pending::DiffOutcome;
use crate::nvim::seam::LuaCall;
use crate::state::State;

pub struct CloseDiff;

#[async_trait]
impl Tool for CloseDiff {
    type Args = CloseArgs;

    const SPEC: Spec = Spec::editor(
        "closeDiff",
        "Close the diff of a file; answers JSON text {\"content\": the proposal as the person left it, or null}. ide/diffClosed follows unless suppressNotification is true (the person decided in the CLI's prompt).",
        || {
            json!({
                "type": "object",
                "properties": {
                    "filePath": {"type": "string", "description": "absolute path given to openDiff"},
                    "suppressNotification": {"type": "boolean", "description": "true: no ide/diffClosed follows"},
                },
                "required": ["filePath"],
            })
        },
    );

    async fn run(call: &Call<'_>, args: CloseArgs) -> Outcome {
        let content = close(call.state, call.client()?, args).await;
        let mut result = text_content(&[json!({"content": content}).to_string()]);
        result["isError"] = json!(false);
        Ok(result)
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloseArgs {
    file_path: String,
    /// Set when the person answered in the CLI's own prompt: the CLI
    /// resolves the diff itself, and a notification would race it.
    #[serde(default)]
    suppress_notification: Option<bool>,
}

/// `closeDiff`: the proposal's text as the person left it, then the diff
/// closes and the person is told what became of their edits.
async fn close(state: &State, client: ClientId, args: CloseArgs) -> Option<String> {
    let CloseArgs {
        file_path,
        suppress_notification,
    } = args;
    let answered_in_prompt = suppress_notification == Some(true);
    let id = state.diffs().find_tab(client, &file_path)?;
    let content = match state
        .editor()
        .query::<String>(LuaCall::DiffText { id })
        .await
    {
        Ok(text) => text,
        Err(error) => {
            tracing::warn!("cannot read the proposal of {file_path}: {error}");
            None
        }
    };
    if let Some(diff) = state.diffs().take(id) {
        let kind = state.clients().kind(client);
        let (notice, taken) = notice(kind, answered_in_prompt, content.is_some());
        state.take_back_diff(diff, notice, taken, DiffOutcome::rejected(CLOSED_BY_CLIENT));
        if !answered_in_prompt {
            state
                .clients()
                .send(client, closed(&file_path, content.as_deref()));
        }
    }
    content
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
