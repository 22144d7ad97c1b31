//! MCP over the WebSocket, as pi's `pi-ide` extension and Claude Code speak
//! it (Claude Code's IDE protocol): its methods here, and the tools it
//! offers ([`TOOLS`], from [`crate::tools`]). Every request is answered
//! exactly once with its id echoed as sent.
//!
//! Served by our own dispatch over the tokio-tungstenite stream, not by
//! rmcp over it (the `/mcp` endpoint is rmcp's): rmcp reads an id as an
//! `i64` or a string, so `1.5`, `1e3` or `18446744073709551615` would not
//! come back as sent, and it handles each request in a task of its own,
//! where `ping`, `tools/list` and `getDiagnostics` are answered here on
//! the connection's task without a hop (DESIGN: what makes round trips
//! fast). The Claude/pi extras (`selection_changed`, `at_mentioned`,
//! `getSuggestions` sent to pi) need no MCP session either.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::client::ClientId;
use crate::jsonrpc::{self, Id};
use crate::state::State;
use crate::tools::{self, Checked, Offered, Refusal};

pub const PROTOCOL_VERSION: &str = "2024-11-05";

/// The tools served, in `tools/list` order.
pub const TOOLS: &[&dyn Offered] = &[
    &tools::open_diff::OpenDiff,
    &tools::close_tab::CloseTab,
    &tools::close_all_diff_tabs::CloseAllDiffTabs,
    &tools::get_diagnostics::GetDiagnostics,
    &tools::open_file::OpenFile,
    &tools::get_current_selection::GetCurrentSelection,
    &tools::get_latest_selection::GetLatestSelection,
    &tools::get_open_editors::GetOpenEditors,
    &tools::get_workspace_folders::GetWorkspaceFolders,
    &tools::check_document_dirty::CheckDocumentDirty,
    &tools::save_document::SaveDocument,
];

/// A JSON-RPC error reply's code and message.
#[derive(Debug, PartialEq)]
pub struct Error {
    pub code: i64,
    pub message: String,
}

/// What a request asks for, decided without touching the editor (so the
/// whole path from bytes to action can be fuzzed).
#[derive(Debug)]
pub enum Route {
    Initialize {
        client_name: Option<String>,
    },
    /// A fixed answer.
    Answer(Value),
    /// A tool whose arguments parsed.
    Tool(Checked),
    Fail(Error),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    client_info: Option<ClientInfo>,
}

#[derive(Deserialize)]
struct ClientInfo {
    name: Option<String>,
}

#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct Connected {
    pid: u32,
}

/// Routes a request; its params are taken, not copied (an `openDiff`
/// carries the whole proposal).
pub fn route(method: &str, params: Value) -> Route {
    match method {
        "initialize" => Route::Initialize {
            client_name: jsonrpc::extract::<InitializeParams>(params)
                .ok()
                .and_then(|params| params.client_info?.name),
        },
        "ping" => Route::Answer(json!({})),
        "tools/list" => Route::Answer(json!({"tools": tools::list(TOOLS, None)})),
        "tools/call" => match call(params) {
            Ok(call) => Route::Tool(call),
            Err(error) => Route::Fail(error),
        },
        "prompts/list" => Route::Answer(json!({"prompts": []})),
        "resources/list" => Route::Answer(json!({"resources": []})),
        _ => Route::Fail(Error {
            code: jsonrpc::METHOD_NOT_FOUND,
            message: format!("Method not found: {method}"),
        }),
    }
}

/// Checks `tools/call {name, arguments}` without touching the editor.
fn call(params: Value) -> Result<Checked, Error> {
    let Ok(CallParams { name, arguments }) = jsonrpc::extract(params) else {
        return Err(invalid_params("tools/call needs a string `name`".into()));
    };
    // Claude tolerates -32601 for tools an editor lacks.
    let Some(tool) = TOOLS.iter().find(|tool| tool.spec().name == name) else {
        return Err(Error {
            code: jsonrpc::METHOD_NOT_FOUND,
            message: format!("Unknown tool: {name}"),
        });
    };
    tool.check(arguments)
        .map_err(|refusal| invalid_params(refusal.message().to_owned()))
}

fn invalid_params(message: String) -> Error {
    Error {
        code: jsonrpc::INVALID_PARAMS,
        message,
    }
}

/// `{"tools": [...]}`, serialized once: it never changes.
fn tools_list() -> &'static serde_json::value::RawValue {
    static LIST: std::sync::OnceLock<Box<serde_json::value::RawValue>> = std::sync::OnceLock::new();
    LIST.get_or_init(|| jsonrpc::raw(&json!({"tools": tools::list(TOOLS, None)})))
}

/// The reply to a request that needs nothing from Neovim, made at once so
/// the connection answers it without a task; `None` for the others.
pub fn answer_now(
    state: &State,
    client: ClientId,
    id: &Id,
    method: &str,
    params: &Value,
) -> Option<String> {
    match method {
        "ping" => Some(jsonrpc::result(id, json!({}))),
        "tools/list" => Some(jsonrpc::raw_result(id, tools_list())),
        // Every file's diagnostics, pi's call before each model request.
        "tools/call"
            if params.get("name").and_then(Value::as_str) == Some("getDiagnostics")
                && params.get("arguments").is_none_or(|args| {
                    args.is_null() || args.as_object().is_some_and(|a| a.is_empty())
                }) =>
        {
            let kind = state.clients().kind(client)?;
            let result = state
                .diagnostics()
                .reply_now(kind, |text| jsonrpc::raw(&tools::text_content(&[text])))?;
            Some(jsonrpc::raw_result(id, &result))
        }
        _ => None,
    }
}

/// Handles one request and queues its reply.
pub async fn request(
    state: &std::sync::Arc<State>,
    client: ClientId,
    id: Id,
    method: &str,
    params: Value,
) {
    let outcome = match route(method, params) {
        Route::Initialize { client_name } => {
            if let Some(name) = client_name {
                state.client_named(client, name);
            }
            state
                .clients()
                .send(client, jsonrpc::result(&id, initialize_result()));
            // pi never asks for the current context: push it right away.
            state.push_selection(client).await;
            return;
        }
        Route::Answer(result) => Ok(result),
        Route::Tool(call) => match call.run(state, Some(client)).await {
            Ok(result) => Ok(result),
            Err(Refusal::Arguments(message)) => Err(invalid_params(message)),
            Err(failed) => Ok(failed.into_result()),
        },
        Route::Fail(error) => Err(error),
    };
    let reply = match outcome {
        Ok(result) => jsonrpc::result(&id, result),
        Err(error) => jsonrpc::error(&id, error.code, &error.message),
    };
    state.clients().send(client, reply);
}

/// Notifications need no answer; `ide_connected` tells which process the
/// agent is, the others need no action.
pub fn notification(state: &State, client: ClientId, method: &str, params: Value) {
    match method {
        "ide_connected" => match jsonrpc::extract::<Connected>(params) {
            Ok(Connected { pid }) => state.client_pid(client, pid),
            Err(_) => tracing::debug!("client {}: ide_connected without a pid", client.0),
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
