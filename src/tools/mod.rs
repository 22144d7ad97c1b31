//! Every tool, one file each, in one registry. A tool is a type that
//! implements [`Tool`]: its [`Spec`] (name, description, input schema,
//! whether it waits for the person, whether it runs on a project), the
//! type its arguments parse into, and its handler. A transport offers the
//! tools of a list ([`crate::mcp_ws::TOOLS`], [`crate::mcp_http::TOOLS`],
//! [`crate::ide_companion::TOOLS`]) and knows nothing else of them: a new
//! tool is its file, its `pub mod` line here and a line in a list.
//! Tools talk to the editor through [`State`], never to sockets.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::client::ClientId;
use crate::peer::Connection;
use crate::project::{Answer, Failure, Project};
use crate::state::State;

/// What `tools/list` says about a tool, and how it is called.
#[derive(Clone, Copy)]
pub struct Spec {
    pub name: &'static str,
    pub description: &'static str,
    /// Builds the JSON Schema of the arguments; `properties` is always an
    /// object (a project tool's `projectPath` is added by [`input_schema`]).
    pub schema: fn() -> Value,
    /// It shows something the person decides on, so it may wait long.
    pub waits_for_the_person: bool,
    /// It runs on the project the call's `projectPath` names.
    pub in_project: bool,
}

impl Spec {
    /// A tool of the editor and its workspace folder.
    pub const fn editor(
        name: &'static str,
        description: &'static str,
        schema: fn() -> Value,
    ) -> Spec {
        Spec {
            name,
            description,
            schema,
            waits_for_the_person: false,
            in_project: false,
        }
    }

    /// A tool on the project a call's `projectPath` names.
    pub const fn project(
        name: &'static str,
        description: &'static str,
        schema: fn() -> Value,
    ) -> Spec {
        Spec {
            in_project: true,
            ..Spec::editor(name, description, schema)
        }
    }

    /// The same tool, waiting for the person's decision.
    pub const fn waiting(self) -> Spec {
        Spec {
            waits_for_the_person: true,
            ..self
        }
    }
}

/// The schema of a tool without arguments.
pub fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

/// A tool: its spec, its arguments' type and its handler.
#[async_trait]
pub trait Tool: Sync + 'static {
    /// What the call's `arguments` parse into (`{}` when it has none).
    type Args: DeserializeOwned + Send + 'static;
    const SPEC: Spec;
    /// Whether the person's options offer it.
    fn offered(_state: &State) -> bool {
        true
    }
    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome;
}

/// A tool that runs on the project the call's `projectPath` names and
/// answers with text and the same as `structuredContent` (the shape of
/// JetBrains' tools); its [`Spec::in_project`] is true.
#[async_trait]
pub trait ProjectTool: Sync + 'static {
    type Args: DeserializeOwned + Send + 'static;
    const SPEC: Spec;
    /// Whether the person's options offer it.
    fn offered(_state: &State) -> bool {
        true
    }
    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer;
}

#[async_trait]
impl<T: ProjectTool> Tool for T {
    type Args = T::Args;
    const SPEC: Spec = T::SPEC;

    fn offered(state: &State) -> bool {
        T::offered(state)
    }

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        answered(T::run(call.state, call.project()?, args).await)
    }
}

/// A tool's answer: the `CallToolResult` as JSON, or why there is none.
pub type Outcome = Result<Value, Refusal>;

/// Why a call has no result.
#[derive(Debug, PartialEq)]
pub enum Refusal {
    /// The arguments do not fit the tool's schema.
    Arguments(String),
    /// The tool could not do it (told to the agent as an `isError` result).
    Failed(String),
}

impl Refusal {
    pub fn message(&self) -> &str {
        match self {
            Refusal::Arguments(message) | Refusal::Failed(message) => message,
        }
    }

    /// The `isError` result that tells the agent.
    pub fn into_result(self) -> Value {
        let (Refusal::Arguments(message) | Refusal::Failed(message)) = self;
        json!({"content": [{"type": "text", "text": message}], "isError": true})
    }
}

impl From<Failure> for Refusal {
    fn from(Failure(message): Failure) -> Self {
        Refusal::Failed(message)
    }
}

/// Who calls, and on what.
pub struct Call<'a> {
    pub state: &'a Arc<State>,
    /// The client, when the transport keeps one per agent.
    client: Option<ClientId>,
    /// The project, for a tool [`Spec::in_project`].
    project: Option<Project>,
}

impl Call<'_> {
    pub fn client(&self) -> Result<ClientId, Refusal> {
        self.client
            .ok_or_else(|| Refusal::Failed("this tool needs a connected client".into()))
    }

    pub fn project(&self) -> Result<&Project, Refusal> {
        self.project
            .as_ref()
            .ok_or_else(|| Refusal::Failed("this tool needs a project".into()))
    }
}

/// A tool as the transports see it: any [`Tool`], its arguments erased.
#[async_trait]
pub trait Offered: Sync {
    fn spec(&self) -> Spec;
    fn offered(&self, state: &State) -> bool;
    /// Parses `arguments` (absent or `null`: `{}`) without touching the editor.
    fn check(&'static self, arguments: Value) -> Result<Checked, Refusal>;
    async fn run(&self, call: &Call<'_>, args: Box<dyn Any + Send>) -> Outcome;
}

#[async_trait]
impl<T: Tool> Offered for T {
    fn spec(&self) -> Spec {
        T::SPEC
    }

    fn offered(&self, state: &State) -> bool {
        T::offered(state)
    }

    fn check(&'static self, arguments: Value) -> Result<Checked, Refusal> {
        let arguments = match arguments {
            Value::Null => json!({}),
            arguments => arguments,
        };
        match serde_json::from_value::<T::Args>(arguments) {
            Ok(args) => Ok(Checked {
                tool: self,
                args: Box::new(args),
            }),
            Err(error) => Err(Refusal::Arguments(format!("{}: {error}", T::SPEC.name))),
        }
    }

    async fn run(&self, call: &Call<'_>, args: Box<dyn Any + Send>) -> Outcome {
        match args.downcast::<T::Args>() {
            Ok(args) => T::run(call, *args).await,
            Err(_) => Err(Refusal::Failed(format!(
                "{}: arguments of another tool",
                T::SPEC.name
            ))),
        }
    }
}

/// A call whose tool exists and whose arguments parsed.
pub struct Checked {
    tool: &'static dyn Offered,
    args: Box<dyn Any + Send>,
}

impl std::fmt::Debug for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checked")
            .field("tool", &self.tool.spec().name)
            .finish()
    }
}

impl Checked {
    pub fn spec(&self) -> Spec {
        self.tool.spec()
    }

    /// Runs the call for `client` (when the transport has one); a project
    /// tool was given its project by [`call`].
    pub async fn run(self, state: &Arc<State>, client: Option<ClientId>) -> Outcome {
        self.run_on(state, client, None).await
    }

    async fn run_on(
        self,
        state: &Arc<State>,
        client: Option<ClientId>,
        project: Option<Project>,
    ) -> Outcome {
        let call = Call {
            state,
            client,
            project,
        };
        self.tool.run(&call, self.args).await
    }
}

/// The caller of a call, as far as the transport knows it.
#[derive(Clone, Copy, Default)]
pub struct Caller {
    pub client: Option<ClientId>,
    /// The connection it came over: an edit's diffs go back to the agent
    /// terminal whose process asked.
    pub connection: Option<Connection>,
}

/// Calls `tool` with `arguments`: a project tool's project is opened
/// first (from `projectPath`), then the arguments are parsed and it runs.
pub async fn call(
    tool: &'static dyn Offered,
    state: &Arc<State>,
    caller: Caller,
    arguments: Value,
) -> Outcome {
    let project = match tool.spec().in_project {
        true => {
            let mut project = Project::open(state, &arguments).await?;
            project.caller = caller.connection;
            Some(project)
        }
        false => None,
    };
    tool.check(arguments)?
        .run_on(state, caller.client, project)
        .await
}

/// The tool of `tools` called `name`, if the person's options offer it:
/// an unknown name is refused, never taken for another tool.
pub fn find(
    tools: &[&'static dyn Offered],
    state: &State,
    name: &str,
) -> Option<&'static dyn Offered> {
    tools
        .iter()
        .copied()
        .find(|tool| tool.spec().name == name && tool.offered(state))
}

/// `{name, description, inputSchema}` of every tool of `tools` offered.
pub fn list(tools: &[&'static dyn Offered], state: Option<&State>) -> Vec<Value> {
    tools
        .iter()
        .filter(|tool| state.is_none_or(|state| tool.offered(state)))
        .map(|tool| listed(tool.spec()))
        .collect()
}

/// What `tools/list` says about a tool.
pub fn listed(spec: Spec) -> Value {
    json!({"name": spec.name, "description": spec.description, "inputSchema": input_schema(spec)})
}

/// The tool's schema; a project tool's takes `projectPath` too.
pub fn input_schema(spec: Spec) -> Value {
    let mut schema = (spec.schema)();
    if spec.in_project {
        schema["properties"][PROJECT_PATH] = project_path_schema();
    }
    schema
}

/// The argument every project tool takes: which project the call is about.
pub const PROJECT_PATH: &str = "projectPath";

/// `projectPath` as every project tool's schema describes it.
pub fn project_path_schema() -> Value {
    json!({
        "type": "string",
        "description": "Absolute path of the directory relative paths start from (the agent's working directory); it must lie inside one of this Neovim's roots (its cwd, git root or a language server's workspace folder), and paths stay inside the git checkout holding it",
    })
}

/// An object schema with these properties, these required.
pub fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// A project tool's answer as a result: its text, and the same as
/// `structuredContent`.
pub fn answered(answer: Answer) -> Outcome {
    let (text, structured) = answer?;
    Ok(json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": false,
    }))
}

// Every tool, one file each; the transports list those they offer.
pub mod apply_code_action;
pub mod apply_patch;
pub mod check_document_dirty;
pub mod close_all_diff_tabs;
pub mod close_diff;
pub mod close_tab;
pub mod create_new_file;
pub mod execute_run_configuration;
pub mod execute_terminal_command;
pub mod find_declaration;
pub mod find_definition;
pub mod find_files_by_glob;
pub mod find_files_by_name_keyword;
pub mod find_implementations;
pub mod find_references;
pub mod find_type_definition;
pub mod get_all_open_file_paths;
pub mod get_call_hierarchy;
pub mod get_code_actions;
pub mod get_current_selection;
pub mod get_diagnostics;
pub mod get_document_symbols;
pub mod get_file_diff;
pub mod get_file_problems;
pub mod get_file_text_by_path;
pub mod get_latest_selection;
pub mod get_open_editors;
pub mod get_project_problems;
pub mod get_project_vcs_status;
pub mod get_run_configurations;
pub mod get_symbol_info;
pub mod get_type_hierarchy;
pub mod get_workspace_folders;
pub mod lint_files;
pub mod list_directory_tree;
pub mod open_diff;
pub mod open_diff_notified;
pub mod open_file;
pub mod open_file_in_editor;
pub mod reformat_file;
pub mod rename_refactoring;
pub mod replace_text_in_file;
pub mod save_document;
pub mod search_in_files_by_regex;
pub mod search_in_files_by_text;
pub mod search_symbol;

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

/// What a tool without arguments takes: anything.
pub type NoArgs = serde::de::IgnoredAny;

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

    const TRANSPORTS: [&[&dyn Offered]; 3] = [
        crate::mcp_ws::TOOLS,
        crate::mcp_http::TOOLS,
        crate::ide_companion::TOOLS,
    ];

    fn check(name: &str, arguments: Value) -> Result<Checked, Refusal> {
        let tool = crate::mcp_ws::TOOLS
            .iter()
            .find(|tool| tool.spec().name == name)
            .unwrap();
        tool.check(arguments)
    }

    #[test]
    fn the_editor_tools_parse_their_arguments() {
        assert!(check("openFile", json!({"filePath": "a"})).is_ok());
        for name in [
            "openFile",
            "checkDocumentDirty",
            "saveDocument",
            "close_tab",
        ] {
            let error = check(name, json!({})).unwrap_err();
            assert!(matches!(error, Refusal::Arguments(_)), "{name}");
            assert!(error.message().starts_with(&format!("{name}: ")), "{name}");
        }
        for name in [
            "getCurrentSelection",
            "getLatestSelection",
            "getOpenEditors",
            "getWorkspaceFolders",
        ] {
            assert!(check(name, Value::Null).is_ok(), "{name}");
            assert!(check(name, json!({"x": 1})).is_ok(), "{name}");
        }
        // openDiff's bad arguments are answered DIFF_REJECTED, never refused.
        assert!(check("openDiff", json!(7)).is_ok());
    }

    #[test]
    fn every_tool_file_is_registered_once_and_names_are_unique_per_kind() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
        let files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
            .filter(|name| name != "mod")
            .collect();
        let mut offered: Vec<(&str, &str)> = TRANSPORTS
            .iter()
            .flat_map(|list| {
                list.iter()
                    .map(|tool| (tool.spec().name, tool.spec().description))
            })
            .collect();
        offered.sort();
        offered.dedup();
        assert_eq!(
            files.len(),
            offered.len(),
            "one file per tool, each offered"
        );
        // Two tools share a name (`openDiff`) only on different transports.
        for list in TRANSPORTS {
            let mut names: Vec<&str> = list.iter().map(|tool| tool.spec().name).collect();
            names.sort();
            let count = names.len();
            names.dedup();
            assert_eq!(names.len(), count, "each name once per transport");
        }
    }

    #[test]
    fn every_schema_is_an_object_schema_with_object_properties() {
        for tool in TRANSPORTS.iter().flat_map(|tools| list(tools, None)) {
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
