//! MCP methods. Every request is answered exactly once with its id echoed.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::host::Shared;
use crate::hub::ClientId;
use crate::jsonrpc;
use crate::tools::{self, ToolCall, ToolError};

pub const PROTOCOL_VERSION: &str = "2024-11-05";

/// What a request asks for, decided without touching the editor (so the
/// whole path from bytes to action can be fuzzed).
#[derive(Debug)]
pub enum Route {
    Initialize {
        client_name: Option<String>,
    },
    /// A fixed answer.
    Answer(Value),
    Tool(ToolCall),
    Fail(ToolError),
}

pub fn route(method: &str, params: &Value) -> Route {
    match method {
        "initialize" => Route::Initialize {
            client_name: params
                .pointer("/clientInfo/name")
                .and_then(Value::as_str)
                .map(str::to_owned),
        },
        "ping" => Route::Answer(json!({})),
        "tools/list" => Route::Answer(json!({"tools": tools::list()})),
        "tools/call" => match tools::parse_call(params) {
            Ok(call) => Route::Tool(call),
            Err(error) => Route::Fail(error),
        },
        "prompts/list" => Route::Answer(json!({"prompts": []})),
        "resources/list" => Route::Answer(json!({"resources": []})),
        _ => Route::Fail(ToolError {
            code: jsonrpc::METHOD_NOT_FOUND,
            message: format!("Method not found: {method}"),
        }),
    }
}

/// Handles one request and queues its reply.
pub async fn request(
    shared: &Arc<Shared>,
    client: ClientId,
    id: Value,
    method: &str,
    params: Value,
) {
    let outcome = match route(method, &params) {
        Route::Initialize { client_name } => {
            if let (Some(name), Some(kind)) = (client_name, shared.hub.kind(client)) {
                shared.hub.set_name(client, name.clone());
                let event = crate::host::client_json(client, kind, Some(name));
                shared.editor.push(
                    "pi-ide.host",
                    "_on_client",
                    vec![json!("initialized"), event],
                );
            }
            shared
                .hub
                .send(client, jsonrpc::result(&id, initialize_result()));
            // pi never asks for the current context: push it right away.
            shared.push_selection(client).await;
            return;
        }
        Route::Answer(result) => Ok(result),
        Route::Tool(call) => tools::run(shared, client, call).await,
        Route::Fail(error) => Err(error),
    };
    let reply = match outcome {
        Ok(result) => jsonrpc::result(&id, result),
        Err(error) => jsonrpc::error(&id, error.code, &error.message),
    };
    shared.hub.send(client, reply);
}

/// Notifications need no answer; the ones we know need no action either.
pub fn notification(_shared: &Arc<Shared>, client: ClientId, method: &str, _params: Value) {
    match method {
        "notifications/initialized"
        | "notifications/cancelled"
        | "ide_connected"
        | "request_cancelled" => {}
        _ => tracing::debug!("client {}: ignored notification {method}", client.0),
    }
}

fn initialize_result() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "pi-ide.nvim", "version": env!("CARGO_PKG_VERSION")},
    })
}
