//! MCP tools, one file each, and the registry behind `tools/list` and
//! `tools/call`. Tools talk to the editor through [`State`], never to sockets.

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::client::ClientId;
use crate::confine::{self, Confined, ProjectRoot, links};
use crate::jsonrpc;
use crate::nvim::seam::LuaCall;
use crate::state::State;

/// What `tools/list` says about a tool.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// Builds the JSON Schema of the arguments; `properties` is always an object.
    pub schema: fn() -> Value,
}

/// A tool: its spec, whether it waits for the person, and how a call's
/// arguments become the call to run. Each lives in a file of its own.
pub struct Tool {
    pub spec: ToolSpec,
    /// It shows something the person decides on (`openDiff`).
    pub waits_for_the_person: bool,
    /// Checks the arguments without touching the editor.
    pub parse: fn(Value) -> Result<Box<dyn Call>, ToolError>,
}

/// A call whose arguments were checked, ready to run.
#[async_trait]
pub trait Call: Send + std::fmt::Debug {
    async fn run(self: Box<Self>, state: &State, client: ClientId) -> Value;
}

/// Declares each tool's module and lists their `TOOL`s, in `tools/list`
/// order: a file `NAME.rs` holds the tool called NAME (or its camelCase).
macro_rules! registry {
    ($($tool:ident,)*) => {
        $(mod $tool;)*
        /// Every tool served, in `tools/list` order.
        pub const TOOLS: &[Tool] = &[$($tool::TOOL,)*];
    };
}

registry! {
    open_diff,
    close_tab,
    close_all_diff_tabs,
    get_diagnostics,
    open_file,
    get_current_selection,
    get_latest_selection,
    get_open_editors,
    get_workspace_folders,
    check_document_dirty,
    save_document,
}

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

/// `{"tools": [...]}` as JSON text, built once: it never changes.
pub fn list_json() -> &'static str {
    static LIST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LIST.get_or_init(|| json!({"tools": list()}).to_string())
}

pub fn list() -> Value {
    TOOLS
        .iter()
        .map(|tool| &tool.spec)
        .map(|spec| json!({"name": spec.name, "description": spec.description, "inputSchema": (spec.schema)()}))
        .collect()
}

/// A `tools/call` whose tool exists and whose arguments were checked.
#[derive(Debug)]
pub struct ToolCall {
    pub name: &'static str,
    pub waits_for_the_person: bool,
    call: Box<dyn Call>,
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
    // Claude tolerates -32601 for tools an editor lacks.
    let Some(tool) = TOOLS.iter().find(|tool| tool.spec.name == name) else {
        return Err(ToolError {
            code: jsonrpc::METHOD_NOT_FOUND,
            message: format!("Unknown tool: {name}"),
        });
    };
    Ok(ToolCall {
        name: tool.spec.name,
        waits_for_the_person: tool.waits_for_the_person,
        call: (tool.parse)(arguments)?,
    })
}

/// Runs a checked tool call.
pub async fn run(state: &State, client: ClientId, call: ToolCall) -> Value {
    call.call.run(state, client).await
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
        assert_eq!(call.map(|c| c.name).ok(), Some("openFile"));
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
    fn every_tool_file_is_registered_under_its_own_name_once() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/claude_ide/tools");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
            .filter(|name| name != "mod")
            .collect();
        files.sort();
        // `close_tab` is named as is; the others in camelCase.
        let snake = |name: &str| {
            name.chars().fold(String::new(), |mut out, c| {
                if c.is_ascii_uppercase() {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
                out
            })
        };
        let mut names: Vec<String> = TOOLS.iter().map(|tool| snake(tool.spec.name)).collect();
        names.sort();
        assert_eq!(names, files, "one file per tool, named for it");
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(unique, names, "each name once");
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
