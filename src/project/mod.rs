//! The project tools served over Streamable-HTTP MCP, named and shaped as
//! JetBrains' built-in MCP server's: paths relative to the project root
//! (Neovim's cwd, or the root `projectPath` names), 1-based lines and
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

mod edits;
mod files;
mod line_text;
mod lsp;
mod lsp_answers;
mod problems;
mod search;
mod symbol_search;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::nvim::seam::{LuaCall, ProjectRoots};
use crate::state::State;
use crate::tools::paths;

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
                "description": "Absolute path of the project root; when given it must be one of this Neovim's (its cwd, git root or a language server's workspace folder)",
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

/// The project root the call is about.
pub struct Project {
    /// Where relative paths start: Neovim's cwd, or the root the call's
    /// `projectPath` names, as Neovim spells it.
    pub root: String,
    /// Every root of this Neovim, the cwd first: the cwd, its git root and
    /// the language servers' workspace folders. Paths must stay inside one.
    pub roots: Vec<String>,
}

/// The project roots as Neovim sees them now.
async fn read_roots(state: &State) -> Result<ProjectRoots, Failure> {
    match state
        .editor
        .query::<ProjectRoots>(LuaCall::ProjectRoots)
        .await
    {
        Ok(Some(found)) if !found.cwd.is_empty() => Ok(found),
        Ok(_) => Err(Failure("Neovim has no current directory".into())),
        Err(error) => Err(Failure(format!(
            "cannot read Neovim's project roots: {error}"
        ))),
    }
}

impl Project {
    /// The call's root, after checking its `projectPath` against the roots.
    async fn open(state: &State, arguments: &Value) -> Result<Project, Failure> {
        let found = match state.project_roots.get() {
            Ok(kept) => kept,
            Err(generation) => {
                let found = read_roots(state).await?;
                state.project_roots.store(generation, found.clone());
                found
            }
        };
        let git_root = state.root.borrow().to_string_lossy().into_owned();
        let roots = roots(found, git_root);
        Project::choose(roots, arguments.get("projectPath"))
    }

    /// The root `project_path` names (none: the cwd), or why it names none.
    fn choose(roots: Vec<String>, project_path: Option<&Value>) -> Result<Project, Failure> {
        let root = match project_path {
            None | Some(Value::Null) => roots[0].clone(),
            Some(Value::String(given)) if given.is_empty() => roots[0].clone(),
            Some(Value::String(given)) => {
                let wanted = canonical(given);
                match roots.iter().find(|root| canonical(root) == wanted) {
                    Some(root) => root.clone(),
                    None => {
                        return Err(Failure(format!(
                            "projectPath {given} is not this Neovim's project; its roots are {}",
                            roots.join(", ")
                        )));
                    }
                }
            }
            Some(other) => {
                return Err(Failure(format!(
                    "projectPath must be a string, got {other}"
                )));
            }
        };
        Ok(Project { root, roots })
    }

    /// The absolute path of `given` (relative to the root, or absolute),
    /// refused unless it stays inside one of the roots.
    pub fn resolve(&self, given: &str) -> Result<String, Failure> {
        let path = paths::resolve(&self.root, given);
        if paths::inside(&self.root, &path) || self.roots.iter().any(|r| paths::inside(r, &path)) {
            Ok(path)
        } else if self.roots.len() > 1 {
            Err(Failure(format!(
                "{given} is outside this Neovim's project roots {}",
                self.roots.join(", ")
            )))
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

/// The cwd, then the git root and workspace folders it does not already
/// name. `/` and the home directory are no project: a language server
/// rooted there (or a dotfiles repository) would open every file to agents.
fn roots(found: ProjectRoots, git_root: String) -> Vec<String> {
    let too_wide: Vec<PathBuf> = std::iter::once(PathBuf::from("/"))
        .chain(dirs::home_dir().map(|home| canonical(&home.to_string_lossy())))
        .collect();
    let mut seen = vec![canonical(&found.cwd)];
    let mut roots = vec![found.cwd];
    for root in std::iter::once(git_root).chain(found.folders) {
        let real = canonical(&root);
        if root.is_empty() || seen.contains(&real) || too_wide.contains(&real) {
            continue;
        }
        seen.push(real);
        roots.push(root);
    }
    roots
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
            roots: vec![root.to_str().unwrap().to_owned()],
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

    fn string(path: &Path) -> String {
        path.to_str().unwrap().to_owned()
    }

    #[test]
    fn project_path_names_one_root_through_symlinks_and_trailing_slashes() {
        let scratch = crate::scratch::Scratch::new("roots");
        let (cwd, lib) = (scratch.join("app"), scratch.join("lib"));
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&lib).unwrap();
        std::os::unix::fs::symlink(&lib, scratch.join("lib-link")).unwrap();
        let found = ProjectRoots {
            cwd: string(&cwd),
            folders: vec![string(&lib), string(&cwd), "/".into()],
        };
        let home = dirs::home_dir().map(|h| string(&h)).unwrap_or_default();
        let all = roots(found, home);
        assert_eq!(
            all,
            [string(&cwd), string(&lib)],
            "once each; / and ~ left out"
        );

        let pick = |given: Value| Project::choose(all.clone(), Some(&given));
        assert_eq!(
            Project::choose(all.clone(), None).unwrap().root,
            string(&cwd)
        );
        assert_eq!(pick(json!("")).unwrap().root, string(&cwd));
        let linked = format!("{}/", scratch.join("lib-link").display());
        let project = pick(json!(linked)).unwrap();
        assert_eq!(project.root, string(&lib), "symlink and slash resolved");
        assert_eq!(
            project.resolve("src/x.rs").unwrap(),
            format!("{}/src/x.rs", lib.display())
        );
        assert_eq!(
            project.relative(&format!("{}/src/x.rs", lib.display())),
            "src/x.rs"
        );
        let in_app = format!("{}/main.rs", cwd.display());
        assert_eq!(
            project.resolve(&in_app).unwrap(),
            in_app,
            "inside another root"
        );
        let outside = project.resolve("../elsewhere").unwrap_err().0;
        assert!(
            outside.contains(&string(&cwd)) && outside.contains(&string(&lib)),
            "{outside}"
        );

        let wrong = pick(json!(string(&scratch))).err().unwrap().0;
        assert!(wrong.contains("not this Neovim's project"), "{wrong}");
        assert!(
            wrong.contains(&string(&cwd)) && wrong.contains(&string(&lib)),
            "names the roots: {wrong}"
        );
        assert!(pick(json!(7)).is_err());
    }
}
