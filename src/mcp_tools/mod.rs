//! The project tools served over Streamable-HTTP MCP, named and shaped as
//! JetBrains' built-in MCP server's: paths relative to the project root
//! (Neovim's cwd, or the call's `projectPath`), 1-based lines and
//! columns, text content plus `structuredContent`. They know nothing about
//! HTTP.
//!
//! * [`files`]    – `get_all_open_file_paths`, `get_file_text_by_path`.
//! * [`problems`] – `get_file_problems`, `get_project_problems`.
//! * [`search`]   – `find_files_by_glob`, `find_files_by_name_keyword`,
//!   `search_in_files_by_text`, `search_in_files_by_regex`,
//!   `list_directory_tree`.
//! * [`lsp`]      – `get_symbol_info`, `find_definition`, `find_references`,
//!   `get_document_symbols`, from Neovim's language servers.
//! * [`lsp_answers`] – the servers' answers as Lua passes them on, read.
//! * [`line_text`] – the text of the lines an answer names, off the UI thread.
//! * [`edits`]    – the tools that change files, through the person's
//!   approval: `replace_text_in_file`, `create_new_file`, `reformat_file`,
//!   `rename_refactoring`, `get_code_actions`, `apply_code_action`.
//! * [`symbol_search`] – `search_symbol`, workspace symbols.
//! * [`routing`]  – which project a call is about (`projectPath`), and
//!   keeping its paths inside it.

mod edits;
mod files;
mod line_text;
mod lsp;
mod lsp_answers;
mod problems;
mod routing;
mod search;
mod symbol_search;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::state::State;
pub use routing::Project;

/// What `tools/list` says about a tool.
pub struct ProjectTool {
    pub name: &'static str,
    pub description: &'static str,
    /// The tool's own properties and required ones; `projectPath` is added.
    pub properties: fn() -> Value,
    pub required: &'static [&'static str],
}

/// Every tool served, in `tools/list` order.
pub const TOOLS: &[ProjectTool] = &[
    files::OPEN_FILES,
    files::FILE_TEXT,
    problems::FILE_PROBLEMS,
    problems::PROJECT_PROBLEMS,
    search::GLOB,
    search::NAME_KEYWORD,
    search::TEXT,
    search::REGEX,
    search::TREE,
    files::OPEN_IN_EDITOR,
    lsp::SYMBOL_INFO,
    lsp::DEFINITION,
    lsp::REFERENCES,
    lsp::DOCUMENT_SYMBOLS,
    edits::text::REPLACE,
    edits::text::CREATE,
    edits::lsp::REFORMAT,
    edits::lsp::RENAME,
    edits::lsp::CODE_ACTIONS,
    edits::lsp::APPLY_CODE_ACTION,
    symbol_search::SEARCH_SYMBOL,
];

/// Whether tool `name` changes files, and so may wait for the person's
/// approval in Neovim.
pub fn may_wait_for_the_person(name: &str) -> bool {
    matches!(
        name,
        "replace_text_in_file"
            | "create_new_file"
            | "reformat_file"
            | "rename_refactoring"
            | "apply_code_action"
    )
}

/// `[{name, description, inputSchema}]` for `tools/list`.
pub fn list() -> Vec<Value> {
    TOOLS
        .iter()
        .map(|tool| {
            let mut properties = (tool.properties)();
            properties["projectPath"] = json!({
                "type": "string",
                "description": "Absolute path of the directory relative paths start from (the agent's working directory); it must lie inside one of this Neovim's roots (its cwd, git root or a language server's workspace folder), and paths stay inside the git checkout holding it",
            });
            json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": {
                    "type": "object",
                    "properties": properties,
                    "required": tool.required,
                },
            })
        })
        .collect()
}

/// A tool's failure, told to the agent as an `isError` result.
#[derive(Debug)]
pub struct Failure(pub String);

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure(message)
    }
}

/// Runs tool `name`: a `CallToolResult` as JSON, or `None` when there is no
/// such tool.
pub async fn call(state: &State, name: &str, arguments: Value) -> Option<Value> {
    if !TOOLS.iter().any(|tool| tool.name == name) {
        return None;
    }
    let outcome = match Project::open(state, &arguments).await {
        Ok(project) => match name {
            "get_all_open_file_paths" => files::open_files(state, &project).await,
            "get_file_text_by_path" => files::file_text(state, &project, arguments).await,
            "get_file_problems" => problems::file_problems(state, &project, arguments).await,
            "find_files_by_glob" => search::by_glob(&project, arguments).await,
            "find_files_by_name_keyword" => search::by_name_keyword(&project, arguments).await,
            "search_in_files_by_text" => search::in_files(&project, arguments, false).await,
            "search_in_files_by_regex" => search::in_files(&project, arguments, true).await,
            "list_directory_tree" => search::tree(&project, arguments).await,
            "open_file_in_editor" => files::open_in_editor(state, &project, arguments).await,
            "get_symbol_info" => lsp::symbol_info(state, &project, arguments).await,
            "find_definition" => lsp::definition(state, &project, arguments).await,
            "find_references" => lsp::references(state, &project, arguments).await,
            "get_document_symbols" => lsp::document_symbols(state, &project, arguments).await,
            "replace_text_in_file" => edits::text::replace_text(state, &project, arguments).await,
            "create_new_file" => edits::text::create_file(state, &project, arguments).await,
            "reformat_file" => edits::lsp::reformat(state, &project, arguments).await,
            "rename_refactoring" => edits::lsp::rename(state, &project, arguments).await,
            "get_code_actions" => edits::lsp::code_actions(state, &project, arguments).await,
            "apply_code_action" => edits::lsp::apply_action(state, &project, arguments).await,
            "search_symbol" => symbol_search::search(state, &project, arguments).await,
            _ => problems::project_problems(state, &project, arguments).await,
        },
        Err(failure) => Err(failure),
    };
    Some(match outcome {
        Ok((text, structured)) => json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": false,
        }),
        Err(Failure(message)) => json!({
            "content": [{"type": "text", "text": message}],
            "isError": true,
        }),
    })
}

/// A successful result: its text, and the same as JSON.
pub type Answer = Result<(String, Value), Failure>;

/// Parses a tool's arguments, or says which one is wrong.
pub fn arguments<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, Failure> {
    serde_json::from_value(arguments).map_err(|e| Failure(format!("{tool}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_an_object_with_its_required_properties() {
        for tool in list() {
            let schema = &tool["inputSchema"];
            assert_eq!(schema["type"], "object");
            assert!(schema["properties"]["projectPath"].is_object());
            for required in schema["required"].as_array().unwrap() {
                assert!(schema["properties"][required.as_str().unwrap()].is_object());
            }
        }
    }
}
