//! `getDiagnostics {uri?}`: what `vim.diagnostic` knows, in the shape each
//! client parses, answered from the host's mirror. pi calls it before every
//! model request and waits forever, so it never waits on Neovim.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Call, Tool, ToolError, ToolSpec, arguments, text_content};
use crate::client::{ClientId, ClientKind};
use crate::state::State;

const SPEC: ToolSpec = ToolSpec {
    name: "getDiagnostics",
    description: "Diagnostics (errors, warnings) Neovim knows for one file uri, or for every open buffer.",
    schema: || {
        json!({
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "file:// uri; omit for all buffers"}},
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
        run(state, client, *self).await
    }
}

#[derive(Debug, Deserialize)]
pub struct Args {
    uri: Option<String>,
}

pub fn parse(args: Value) -> Result<Args, ToolError> {
    arguments("getDiagnostics", args)
}

/// pi: `{uri: [diagnostic]}`; Claude: `[{uri, diagnostics: [diagnostic]}]`.
pub async fn run(state: &State, client: ClientId, args: Args) -> Value {
    let kind = state.clients.kind(client).unwrap_or(ClientKind::Pi);
    let text = state.diagnostics.answer(kind, args.uri.as_deref()).await;
    text_content(&[text])
}
