//! The tools every MCP client gets at `/mcp`, named and shaped as
//! JetBrains' built-in MCP server's: paths relative to the project root
//! (Neovim's cwd, or the call's `projectPath`), 1-based lines and
//! columns, text content plus `structuredContent`. They know nothing about
//! HTTP.
//!
//! A tool is one file in [`tools`], registered there in one line. What
//! several tools share:
//! * [`files`]    – open files, buffer text, showing a file.
//! * [`problems`] – diagnostics of a file (loaded and waited for) or of all.
//! * [`workspace_problems`] – the servers' workspace diagnostics, pulled.
//! * [`search`]   – walking the project: globs, names, text, regex, trees.
//! * [`lsp`]      – asking Neovim's language servers, locations and symbols.
//! * [`lsp_answers`] – the servers' answers as Lua passes them on, read.
//! * [`line_text`] – the text of the lines an answer names, off the UI thread.
//! * [`edits`]    – changing files through the person's approval (one diff
//!   per file, accept-all / reject-all for several), and the edits that
//!   language servers compute.
//! * [`symbol_search`] – workspace symbols, else the tree-sitter outline.
//! * [`hierarchy`] – call and type hierarchies walked level by level.
//! * [`git`]      – git run in the host, bounded in time and output.
//! * [`user_tools`] – tools registered from Lua, and the edits they propose.
//! * [`user_schema`] – their input schemas, checked and served.
//! * [`run`]      – running configurations and commands once the person agreed.
//! * [`routing`]  – which project a call is about (`projectPath`), and
//!   keeping its paths inside it.

mod edits;
mod files;
mod git;
mod hierarchy;
mod line_text;
mod lsp;
mod lsp_answers;
mod problems;
mod routing;
mod run;
mod search;
mod symbol_search;
mod tools;
mod user_schema;
pub mod user_tools;
mod workspace_problems;

use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::peer::Connection;
use crate::state::State;
pub use routing::Project;
pub use tools::TOOLS;

/// A tool of the endpoint: what `tools/list` says about it and what runs
/// it. Each lives in a file of its own in [`tools`].
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// The tool's own properties; `projectPath` is added.
    pub properties: fn() -> Value,
    pub required: &'static [&'static str],
    /// It changes files or runs commands, so it may wait for the person's
    /// approval in Neovim (the client is kept waiting with progress).
    pub waits_for_the_person: bool,
    pub run: Run,
}

/// A tool's handler: the call's project and arguments in, its answer out.
pub type Run = for<'a> fn(&'a State, &'a Project, Value) -> BoxFuture<'a, Answer>;

/// The tool called `name`, or `None`: an unknown name is refused, never
/// taken for another tool.
pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|tool| tool.name == name)
}

/// The built-in tool called `name` if the person's options offer it.
pub fn offered(state: &State, name: &str) -> Option<&'static Tool> {
    find(name).filter(|tool| tools::offered(tool, state))
}

/// `[{name, description, inputSchema}]` for `tools/list`: the built-in
/// tools the person's options offer, then those their config registered.
pub fn list(state: &State) -> Vec<Value> {
    let mut all = built_in(state);
    all.extend(user_tools::list(state));
    all
}

fn built_in(state: &State) -> Vec<Value> {
    TOOLS
        .iter()
        .filter(|tool| tools::offered(tool, state))
        .map(listed)
        .collect()
}

/// The argument every tool takes: which project the call is about.
const PROJECT_PATH: &str = "projectPath";

/// `projectPath` as every tool's schema describes it.
fn project_path_schema() -> Value {
    json!({
        "type": "string",
        "description": "Absolute path of the directory relative paths start from (the agent's working directory); it must lie inside one of this Neovim's roots (its cwd, git root or a language server's workspace folder), and paths stay inside the git checkout holding it",
    })
}

/// What `tools/list` says about a built-in tool.
fn listed(tool: &Tool) -> Value {
    let mut properties = (tool.properties)();
    properties[PROJECT_PATH] = project_path_schema();
    json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": tool.required,
        },
    })
}

/// A tool's failure, told to the agent as an `isError` result.
#[derive(Debug)]
pub struct Failure(pub String);

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure(message)
    }
}

/// Runs tool `name` for the client at the other end of `caller` (when
/// known): a `CallToolResult` as JSON, or `None` when there is no such tool.
pub async fn call(
    state: &State,
    name: &str,
    arguments: Value,
    caller: Option<Connection>,
) -> Option<Value> {
    let outcome = match offered(state, name) {
        Some(tool) => match Project::open(state, &arguments).await {
            Ok(mut project) => {
                project.caller = caller;
                (tool.run)(state, &project, arguments).await
            }
            Err(failure) => Err(failure),
        },
        None => user_tools::call(state, name, arguments).await?,
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
        for tool in TOOLS.iter().map(listed) {
            let schema = &tool["inputSchema"];
            assert_eq!(schema["type"], "object");
            assert!(schema["properties"]["projectPath"].is_object());
            for required in schema["required"].as_array().unwrap() {
                assert!(schema["properties"][required.as_str().unwrap()].is_object());
            }
        }
    }
}
