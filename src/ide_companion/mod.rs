//! The IDE companion protocol Gemini CLI and Qwen Code speak in IDE mode
//! (MCP over Streamable HTTP): the two tools it adds, `openDiff` and
//! `closeDiff`, and the notifications it expects, `ide/contextUpdate`,
//! `ide/diffAccepted`, `ide/diffRejected` and `ide/diffClosed`. The endpoint's other tools
//! are served to these clients as to any MCP client. Knows nothing about
//! HTTP.
//!
//! * [`context`] – `ide/contextUpdate` from the person's recent files and place.
//! * [`diff`]    – `openDiff` (answered at once, decided later) and `closeDiff`.

pub mod context;
pub mod diff;

use std::sync::Arc;

use serde_json::{Value, json};

use crate::client::ClientId;
use crate::state::State;

/// `tools/list` entries of the companion's own tools.
pub fn tools() -> Vec<Value> {
    vec![
        json!({
            "name": "openDiff",
            "description": "Show a proposed change of a file as a diff in Neovim. Answered at once; how it ends follows as ide/diffAccepted (with the final text), ide/diffRejected or ide/diffClosed (closed without a decision). Neovim never writes the file.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "filePath": {"type": "string", "description": "absolute path of the file"},
                    "newContent": {"type": "string", "description": "the complete proposed text"},
                },
                "required": ["filePath", "newContent"],
            },
        }),
        json!({
            "name": "closeDiff",
            "description": "Close the diff of a file; answers JSON text {\"content\": the proposal as the person left it, or null}. ide/diffClosed follows unless suppressNotification is true (the person decided in the CLI's prompt).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "filePath": {"type": "string", "description": "absolute path given to openDiff"},
                    "suppressNotification": {"type": "boolean", "description": "true: no ide/diffClosed follows"},
                },
                "required": ["filePath"],
            },
        }),
    ]
}

/// Runs companion tool `name` for `client`: a `CallToolResult` as JSON, or
/// `None` when it is not one of ours.
pub async fn call(
    state: &Arc<State>,
    client: ClientId,
    name: &str,
    arguments: Value,
) -> Option<Value> {
    match name {
        "openDiff" => Some(diff::open(state, client, arguments).await),
        "closeDiff" => Some(diff::close(state, client, arguments).await),
        _ => None,
    }
}

/// A result with one text item.
fn text_result(text: String, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
}
