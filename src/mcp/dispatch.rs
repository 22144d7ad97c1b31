//! MCP methods. Every request is answered exactly once with its id echoed.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::host::Shared;
use crate::hub::ClientId;
use crate::jsonrpc;
use crate::tools;

pub const PROTOCOL_VERSION: &str = "2024-11-05";

/// Handles one request and queues its reply.
pub async fn request(
    shared: &Arc<Shared>,
    client: ClientId,
    id: Value,
    method: &str,
    params: Value,
) {
    let reply = match method {
        "initialize" => {
            if let Some(name) = params.pointer("/clientInfo/name").and_then(Value::as_str) {
                shared.hub.set_name(client, name.to_owned());
                if let Some(kind) = shared.hub.kind(client) {
                    let event = crate::host::client_json(client, kind, Some(name.to_owned()));
                    shared.editor.push(
                        "pi-ide.host",
                        "_on_client",
                        vec![json!("initialized"), event],
                    );
                }
            }
            shared
                .hub
                .send(client, jsonrpc::result(&id, initialize_result()));
            // pi never asks for the current context: push it right away.
            shared.push_selection(client).await;
            return;
        }
        "ping" => jsonrpc::result(&id, json!({})),
        "tools/list" => jsonrpc::result(&id, json!({"tools": tools::list()})),
        "tools/call" => match tools::call(shared, client, params).await {
            Ok(result) => jsonrpc::result(&id, result),
            Err(error) => jsonrpc::error(&id, error.code, &error.message),
        },
        "prompts/list" => jsonrpc::result(&id, json!({"prompts": []})),
        "resources/list" => jsonrpc::result(&id, json!({"resources": []})),
        _ => jsonrpc::error(
            &id,
            jsonrpc::METHOD_NOT_FOUND,
            &format!("Method not found: {method}"),
        ),
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
