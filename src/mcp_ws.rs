//! The MCP that pi's `pi-ide` extension and Claude Code speak over the
//! WebSocket (Claude Code's IDE protocol): its methods here, its tools in
//! [`tools`], one file each. Every request is answered exactly once with
//! its id echoed.

use serde_json::{Value, json};

use crate::client::ClientId;
use crate::jsonrpc;
use crate::state::State;
pub mod tools;

use tools::{ToolCall, ToolError};

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

/// The reply to a request that needs nothing from Neovim, made at once so
/// the connection answers it without a task; `None` for the others.
pub fn answer_now(
    state: &State,
    client: ClientId,
    id: &Value,
    method: &str,
    params: &Value,
) -> Option<String> {
    match method {
        "ping" => Some(jsonrpc::result_json(id, "{}")),
        "tools/list" => Some(jsonrpc::result_json(id, tools::list_json())),
        // Every file's diagnostics, pi's call before each model request.
        "tools/call"
            if params.get("name").and_then(Value::as_str) == Some("getDiagnostics")
                && params.get("arguments").is_none_or(|args| {
                    args.is_null() || args.as_object().is_some_and(|a| a.is_empty())
                }) =>
        {
            let kind = state.clients.kind(client)?;
            let result = state
                .diagnostics
                .reply_now(kind, |text| tools::text_content(&[text]).to_string())?;
            Some(jsonrpc::result_json(id, &result))
        }
        _ => None,
    }
}

/// Handles one request and queues its reply.
pub async fn request(state: &State, client: ClientId, id: Value, method: &str, params: Value) {
    let route = route(method, &params);
    // The route holds what it needs: a proposal is not kept twice while the
    // person looks at it.
    drop(params);
    let outcome = match route {
        Route::Initialize { client_name } => {
            if let Some(name) = client_name {
                state.client_named(client, name);
            }
            state
                .clients
                .send(client, jsonrpc::result(&id, initialize_result()));
            // pi never asks for the current context: push it right away.
            state.push_selection(client).await;
            return;
        }
        Route::Answer(result) => Ok(result),
        Route::Tool(call) => Ok(tools::run(state, client, call).await),
        Route::Fail(error) => Err(error),
    };
    let reply = match outcome {
        Ok(result) => jsonrpc::result(&id, result),
        Err(error) => jsonrpc::error(&id, error.code, &error.message),
    };
    state.clients.send(client, reply);
}

/// Notifications need no answer; `ide_connected` tells which process the
/// agent is, the others need no action.
pub fn notification(state: &State, client: ClientId, method: &str, params: &Value) {
    match method {
        "ide_connected" => match params.get("pid").and_then(Value::as_u64).map(u32::try_from) {
            Some(Ok(pid)) => state.client_pid(client, pid),
            _ => tracing::debug!("client {}: ide_connected without a pid", client.0),
        },
        "notifications/initialized" | "notifications/cancelled" | "request_cancelled" => {}
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
