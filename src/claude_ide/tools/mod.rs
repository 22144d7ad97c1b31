//! MCP tools, one file each, and the registry behind `tools/list` and
//! `tools/call`. Tools talk to the editor through [`State`], never to sockets.

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::client::ClientId;
use crate::confine::{self, Confined, ProjectRoot, links};
use crate::jsonrpc;
use crate::nvim::seam::LuaCall;
use crate::state::State;

mod check_document_dirty;
mod close_all_diff_tabs;
mod close_tab;
mod get_current_selection;
mod get_diagnostics;
mod get_latest_selection;
mod get_open_editors;
mod get_workspace_folders;
mod open_diff;
mod open_file;
mod save_document;

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
    open_file::SPEC,
    get_current_selection::SPEC,
    get_latest_selection::SPEC,
    get_open_editors::SPEC,
    get_workspace_folders::SPEC,
    check_document_dirty::SPEC,
    save_document::SPEC,
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
    OpenFile(open_file::Args),
    GetCurrentSelection,
    GetLatestSelection,
    GetOpenEditors,
    GetWorkspaceFolders,
    CheckDocumentDirty(check_document_dirty::Args),
    SaveDocument(save_document::Args),
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
        "openFile" => open_file::parse(arguments).map(ToolCall::OpenFile),
        "getCurrentSelection" => Ok(ToolCall::GetCurrentSelection),
        "getLatestSelection" => Ok(ToolCall::GetLatestSelection),
        "getOpenEditors" => Ok(ToolCall::GetOpenEditors),
        "getWorkspaceFolders" => Ok(ToolCall::GetWorkspaceFolders),
        "checkDocumentDirty" => {
            check_document_dirty::parse(arguments).map(ToolCall::CheckDocumentDirty)
        }
        "saveDocument" => save_document::parse(arguments).map(ToolCall::SaveDocument),
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
        ToolCall::OpenFile(args) => open_file::run(state, args).await,
        ToolCall::GetCurrentSelection => get_current_selection::run(state).await,
        ToolCall::GetLatestSelection => get_latest_selection::run(state).await,
        ToolCall::GetOpenEditors => get_open_editors::run(state).await,
        ToolCall::GetWorkspaceFolders => get_workspace_folders::run(state).await,
        ToolCall::CheckDocumentDirty(args) => check_document_dirty::run(state, args).await,
        ToolCall::SaveDocument(args) => save_document::run(state, args).await,
    }
}

/// The arguments of the tools that take one file.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilePathArgs {
    pub file_path: String,
}

/// The schema of [`FilePathArgs`].
pub fn file_path_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"filePath": {"type": "string", "description": "path of the file, absolute or relative to the workspace"}},
        "required": ["filePath"],
    })
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

/// A result whose one text item is `value` as a JSON string (the shape
/// of the editor tools of Claude's VS Code extension).
pub fn json_text(value: Value) -> Value {
    text_content(&[value.to_string()])
}

/// Neovim's global cwd, confirmed as a project: the workspace folder
/// agents' paths are confined to.
pub async fn workspace(state: &State) -> Result<ProjectRoot, String> {
    match state.editor.query::<String>(LuaCall::Workspace).await {
        Ok(Some(cwd)) if !cwd.is_empty() => {
            ProjectRoot::confirm(&cwd).map_err(|not| format!("Neovim's current directory {not}"))
        }
        Ok(_) => Err("Neovim has no current directory".into()),
        Err(error) => Err(format!("cannot read Neovim's current directory: {error}")),
    }
}

/// `given` (absolute, or relative to the workspace folder) if it leads
/// into the workspace folder, else why not.
pub fn confine(root: &ProjectRoot, given: &str) -> Result<Confined, String> {
    let path = links::absolute(root.given(), given);
    confine::confine(std::slice::from_ref(root), &path, false)
        .map_err(|escape| escape.explain(&path, &format!("the workspace folder {}", root.given())))
}

/// The VS Code language id for a Neovim filetype (mostly the same name).
pub fn language_id(filetype: &str) -> &str {
    match filetype {
        "" | "text" => "plaintext",
        "sh" | "bash" | "zsh" => "shellscript",
        "cs" => "csharp",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_tools_parse_their_arguments() {
        let call = parse_call(&json!({"name": "openFile", "arguments": {"filePath": "a"}}));
        assert!(matches!(call, Ok(ToolCall::OpenFile(_))), "{call:?}");
        for name in ["openFile", "checkDocumentDirty", "saveDocument"] {
            let error = parse_call(&json!({"name": name, "arguments": {}})).unwrap_err();
            assert_eq!(error.code, jsonrpc::INVALID_PARAMS, "{name}");
        }
        for name in [
            "getCurrentSelection",
            "getLatestSelection",
            "getOpenEditors",
            "getWorkspaceFolders",
        ] {
            assert!(parse_call(&json!({"name": name})).is_ok(), "{name}");
        }
    }

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
