//! `getDiagnostics {uri?}`: what `vim.diagnostic` knows, in the shape each
//! client parses, answered from the host's mirror. pi calls it before every
//! model request and waits forever, so it never waits on Neovim.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Call, Outcome, Spec, Tool, text_content};
use crate::client::{ClientId, ClientKind};
use crate::state::State;

pub struct GetDiagnostics;

#[async_trait]
impl Tool for GetDiagnostics {
    type Args = Args;

    const SPEC: Spec = Spec::editor(
        "getDiagnostics",
        "Diagnostics (errors, warnings) Neovim knows for one file uri, or for every open buffer.",
        || {
            json!({
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "file:// uri; omit for all buffers"}},
            })
        },
    );

    async fn run(call: &Call<'_>, args: Args) -> Outcome {
        Ok(run(call.state, call.client()?, args).await)
    }
}

#[derive(Debug, Deserialize)]
pub struct Args {
    uri: Option<String>,
}

/// pi: `{uri: [diagnostic]}`; Claude: `[{uri, diagnostics: [diagnostic]}]`.
pub async fn run(state: &State, client: ClientId, args: Args) -> Value {
    let kind = state.clients().kind(client).unwrap_or(ClientKind::Pi);
    let text = state.diagnostics().answer(kind, args.uri.as_deref()).await;
    text_content(&[text])
}
