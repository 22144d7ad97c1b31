//! The tools every MCP client gets at `/mcp` (MCP over Streamable HTTP),
//! named and shaped as JetBrains' built-in MCP server's: paths relative to
//! the project root (Neovim's cwd, or the call's `projectPath`), 1-based
//! lines and columns, text content plus `structuredContent`. They know
//! nothing about HTTP; offering another tool of [`crate::tools`] here is
//! one line of [`TOOLS`].
//!
//! * [`user_tools`] – tools registered from Lua, and the edits they propose.
//! * [`user_schema`] – their input schemas, checked and served.

mod user_schema;
pub mod user_tools;

use std::sync::Arc;

use serde_json::Value;

use crate::peer::Connection;
use crate::state::State;
use crate::tools::{self, Caller, Offered};

/// The built-in tools, in `tools/list` order.
pub const TOOLS: &[&dyn Offered] = &[
    &tools::get_all_open_file_paths::GetAllOpenFilePaths,
    &tools::get_file_text_by_path::GetFileTextByPath,
    &tools::get_file_problems::GetFileProblems,
    &tools::get_project_problems::GetProjectProblems,
    &tools::lint_files::LintFiles,
    &tools::find_files_by_glob::FindFilesByGlob,
    &tools::find_files_by_name_keyword::FindFilesByNameKeyword,
    &tools::search_in_files_by_text::SearchInFilesByText,
    &tools::search_in_files_by_regex::SearchInFilesByRegex,
    &tools::list_directory_tree::ListDirectoryTree,
    &tools::open_file_in_editor::OpenFileInEditor,
    &tools::get_symbol_info::GetSymbolInfo,
    &tools::find_definition::FindDefinition,
    &tools::find_references::FindReferences,
    &tools::find_implementations::FindImplementations,
    &tools::find_type_definition::FindTypeDefinition,
    &tools::find_declaration::FindDeclaration,
    &tools::get_call_hierarchy::GetCallHierarchy,
    &tools::get_type_hierarchy::GetTypeHierarchy,
    &tools::get_document_symbols::GetDocumentSymbols,
    &tools::replace_text_in_file::ReplaceTextInFile,
    &tools::create_new_file::CreateNewFile,
    &tools::reformat_file::ReformatFile,
    &tools::rename_refactoring::RenameRefactoring,
    &tools::get_code_actions::GetCodeActions,
    &tools::apply_code_action::ApplyCodeAction,
    &tools::apply_patch::ApplyPatch,
    &tools::search_symbol::SearchSymbol,
    &tools::get_project_vcs_status::GetProjectVcsStatus,
    &tools::get_file_diff::GetFileDiff,
    &tools::get_run_configurations::GetRunConfigurations,
    &tools::execute_run_configuration::ExecuteRunConfiguration,
    &tools::execute_terminal_command::ExecuteTerminalCommand,
];

/// The built-in tool called `name` if the person's options offer it.
pub fn offered(state: &State, name: &str) -> Option<&'static dyn Offered> {
    tools::find(TOOLS, state, name)
}

/// `[{name, description, inputSchema}]` for `tools/list`: the built-in
/// tools the person's options offer, then those their config registered.
pub fn list(state: &State) -> Vec<Value> {
    let mut all = tools::list(TOOLS, Some(state));
    all.extend(user_tools::list(state));
    all
}

/// Runs tool `name` for the client at the other end of `caller` (when
/// known): a `CallToolResult` as JSON, or `None` when there is no such tool.
pub async fn call(
    state: &Arc<State>,
    name: &str,
    arguments: Value,
    caller: Option<Connection>,
) -> Option<Value> {
    let outcome = match offered(state, name) {
        Some(tool) => {
            let caller = Caller {
                client: None,
                connection: caller,
            };
            tools::call(tool, state, caller, arguments).await
        }
        None => tools::answered(user_tools::call(state, name, arguments).await?),
    };
    Some(outcome.unwrap_or_else(tools::Refusal::into_result))
}
