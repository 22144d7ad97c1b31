//! MCP tools, one file each, and the registry behind `tools/list` and
//! `tools/call`. Tools talk to the editor through [`State`], never to sockets.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::client::ClientId;
use crate::jsonrpc;
use crate::state::State;

mod close_all_diff_tabs;
mod close_tab;
mod get_diagnostics;
mod open_diff;

/// What `tools/list` says about a tool.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// Builds the JSON Schema of the arguments; `properties` is always an object.
    pub schema: fn() -> Value,
}

/// Every tool served, in `tools/list` order.
pub const TOOLS: &[ToolSpec] = &[
    open_diff::SPEC,
    close_tab::SPEC,
    close_all_diff_tabs::SPEC,
    get_diagnostics::SPEC,
];

/// A JSON-RPC error from a tool call.
#[derive(Debug, PartialEq)]
pub struct ToolError {
    pub code: i64,
    pub message: String,
}

impl ToolError {
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ToolError {
            code: jsonrpc::INVALID_PARAMS,
            message: message.into(),
        }
    }
}

pub fn list() -> Value {
    TOOLS
        .iter()
        .map(|tool| json!({"name": tool.name, "description": tool.description, "inputSchema": (tool.schema)()}))
        .collect()
}

/// A `tools/call` whose tool exists and whose arguments were checked.
#[derive(Debug)]
pub enum ToolCall {
    OpenDiff(open_diff::Request),
    CloseTab(close_tab::Args),
    CloseAllDiffTabs,
    GetDiagnostics(get_diagnostics::Args),
}

/// Checks `tools/call {name, arguments}` without touching the editor.
pub fn parse_call(params: &Value) -> Result<ToolCall, ToolError> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(ToolError::invalid_params(
            "tools/call needs a string `name`",
        ));
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(arguments) => arguments.clone(),
    };
    match name {
        "openDiff" => Ok(ToolCall::OpenDiff(open_diff::parse(arguments))),
        "close_tab" => close_tab::parse(arguments).map(ToolCall::CloseTab),
        "closeAllDiffTabs" => Ok(ToolCall::CloseAllDiffTabs),
        "getDiagnostics" => get_diagnostics::parse(arguments).map(ToolCall::GetDiagnostics),
        // Claude tolerates -32601 for tools an editor lacks.
        _ => Err(ToolError {
            code: jsonrpc::METHOD_NOT_FOUND,
            message: format!("Unknown tool: {name}"),
        }),
    }
}

/// Runs a checked tool call.
pub async fn run(state: &State, client: ClientId, call: ToolCall) -> Value {
    match call {
        ToolCall::OpenDiff(request) => open_diff::run(state, client, request).await,
        ToolCall::CloseTab(args) => close_tab::run(state, client, args),
        ToolCall::CloseAllDiffTabs => close_all_diff_tabs::run(state, client),
        ToolCall::GetDiagnostics(args) => get_diagnostics::run(state, client, args).await,
    }
}

/// Parses a tool's arguments, or says which one is wrong.
pub fn arguments<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolError> {
    serde_json::from_value(arguments).map_err(|e| ToolError::invalid_params(format!("{tool}: {e}")))
}

/// A result made of text content items.
pub fn text_content<S: AsRef<str>>(texts: &[S]) -> Value {
    let content: Vec<Value> = texts
        .iter()
        .map(|text| json!({"type": "text", "text": text.as_ref()}))
        .collect();
    json!({ "content": content })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_tool_is_method_not_found() {
        let error = parse_call(&json!({"name": "nope", "arguments": {}})).unwrap_err();
        assert_eq!(error.code, jsonrpc::METHOD_NOT_FOUND);
        let error = parse_call(&json!({"arguments": {}})).unwrap_err();
        assert_eq!(error.code, jsonrpc::INVALID_PARAMS);
    }

    #[test]
    fn every_schema_is_an_object_schema_with_object_properties() {
        let tools = list();
        assert_eq!(tools.as_array().unwrap().len(), TOOLS.len());
        for tool in tools.as_array().unwrap() {
            let schema = &tool["inputSchema"];
            assert_eq!(schema["type"], "object", "{}", tool["name"]);
            assert!(schema["properties"].is_object(), "{}", tool["name"]);
            for required in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                assert!(
                    schema["properties"]
                        .get(required.as_str().unwrap())
                        .is_some(),
                    "{}",
                    tool["name"]
                );
            }
            assert!(!tool["description"].as_str().unwrap().is_empty());
        }
    }
}
