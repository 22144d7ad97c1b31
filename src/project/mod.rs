//! The project tools served over Streamable-HTTP MCP, named and shaped as
//! JetBrains' built-in MCP server's: paths relative to the project root
//! (Neovim's cwd), 1-based lines and columns, text content plus
//! `structuredContent`. They know nothing about HTTP.
//!
//! * [`files`]    – `get_all_open_file_paths`, `get_file_text_by_path`.
//! * [`problems`] – `get_file_problems`, `get_project_problems`.
//! * [`search`]   – `find_files_by_glob`, `find_files_by_name_keyword`,
//!   `search_in_files_by_text`, `search_in_files_by_regex`,
//!   `list_directory_tree`.
//! * [`lsp`]      – `get_symbol_info`, `find_definition`, `find_references`,
//!   `get_document_symbols`, from Neovim's language servers.
//! * [`symbol_search`] – `search_symbol`, workspace symbols.

mod files;
mod lsp;
mod problems;
mod search;
mod symbol_search;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::state::State;
use crate::tools::{paths, workspace};

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
    symbol_search::SEARCH_SYMBOL,
];

/// `[{name, description, inputSchema}]` for `tools/list`.
pub fn list() -> Vec<Value> {
    TOOLS
        .iter()
        .map(|tool| {
            let mut properties = (tool.properties)();
            properties["projectPath"] = json!({
                "type": "string",
                "description": "Absolute path of the project root; when given it must be this Neovim's",
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

/// The project root the call is about.
pub struct Project {
    /// Neovim's cwd, as Neovim spells it.
    pub root: String,
}

impl Project {
    /// The root, after checking the call's `projectPath` against it.
    async fn open(state: &State, arguments: &Value) -> Result<Project, Failure> {
        let root = workspace(state).await?;
        match arguments.get("projectPath") {
            None | Some(Value::Null) => {}
            Some(Value::String(given)) if given.is_empty() => {}
            Some(Value::String(given)) => {
                if canonical(given) != canonical(&root) {
                    return Err(Failure(format!(
                        "projectPath {given} is not this Neovim's project; its root is {root}"
                    )));
                }
            }
            Some(other) => {
                return Err(Failure(format!(
                    "projectPath must be a string, got {other}"
                )));
            }
        }
        Ok(Project { root })
    }

    /// The absolute path of `given` (relative to the root, or absolute),
    /// refused when it leaves the root.
    pub fn resolve(&self, given: &str) -> Result<String, Failure> {
        let path = paths::resolve(&self.root, given);
        if paths::inside(&self.root, &path) {
            Ok(path)
        } else {
            Err(Failure(format!(
                "{given} is outside the project root {}",
                self.root
            )))
        }
    }

    /// `path` relative to the root when inside it, else as it is.
    pub fn relative(&self, path: &str) -> String {
        let root = canonical(&self.root);
        let full = canonical(path);
        match full.strip_prefix(&root) {
            Ok(rest) if rest.as_os_str().is_empty() => ".".into(),
            Ok(rest) => rest.to_string_lossy().into_owned(),
            Err(_) => match Path::new(path).strip_prefix(&self.root) {
                Ok(rest) => rest.to_string_lossy().into_owned(),
                Err(_) => path.to_owned(),
            },
        }
    }
}

/// `path` with symlinks resolved when it exists, without trailing slashes.
fn canonical(path: &str) -> PathBuf {
    let trimmed = path.trim_end_matches('/');
    let trimmed = if trimmed.is_empty() { "/" } else { trimmed };
    std::fs::canonicalize(trimmed).unwrap_or_else(|_| PathBuf::from(trimmed))
}

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

    #[test]
    fn paths_are_confined_to_the_root_and_shown_relative() {
        let root = crate::scratch::Scratch::new("project");
        let project = Project {
            root: root.to_str().unwrap().to_owned(),
        };
        let inside = project.resolve("src/a.rs").unwrap();
        assert_eq!(project.relative(&inside), "src/a.rs");
        assert!(project.resolve("../x").is_err());
        assert!(project.resolve("/etc/passwd").is_err());
        assert_eq!(project.relative("/elsewhere/b"), "/elsewhere/b");
        assert_eq!(
            canonical(&format!("{}/", project.root)),
            canonical(&project.root)
        );
    }
}
