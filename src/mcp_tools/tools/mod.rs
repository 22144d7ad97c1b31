//! Every tool of the `/mcp` endpoint, one file each, registered here in
//! one line: a file `tools/NAME.rs` holds the tool called NAME, a
//! [`Tool`] named `TOOL` with its schema, its handler and whether it waits
//! for the person. A unit test checks that every file here is registered.

pub use super::Tool;
use crate::state::State;

/// Whether the person's options offer `tool` (`mcp.terminal_commands`
/// turns `execute_terminal_command` off).
pub fn offered(tool: &Tool, state: &State) -> bool {
    tool.name != execute_terminal_command::TOOL.name || state.terminal_commands()
}

/// Declares each tool's module and lists their `TOOL`s, in `tools/list`
/// order.
macro_rules! registry {
    ($($tool:ident,)*) => {
        $(mod $tool;)*
        /// Every built-in tool, in `tools/list` order.
        pub const TOOLS: &[Tool] = &[$($tool::TOOL,)*];
    };
}

registry! {
    get_all_open_file_paths,
    get_file_text_by_path,
    get_file_problems,
    get_project_problems,
    lint_files,
    find_files_by_glob,
    find_files_by_name_keyword,
    search_in_files_by_text,
    search_in_files_by_regex,
    list_directory_tree,
    open_file_in_editor,
    get_symbol_info,
    find_definition,
    find_references,
    find_implementations,
    find_type_definition,
    find_declaration,
    get_call_hierarchy,
    get_type_hierarchy,
    get_document_symbols,
    replace_text_in_file,
    create_new_file,
    reformat_file,
    rename_refactoring,
    get_code_actions,
    apply_code_action,
    apply_patch,
    search_symbol,
    get_project_vcs_status,
    get_file_diff,
    get_run_configurations,
    execute_run_configuration,
    execute_terminal_command,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_file_is_registered_under_its_own_name_once() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mcp_tools/tools");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
            .filter(|name| name != "mod")
            .collect();
        files.sort();
        let mut names: Vec<String> = TOOLS.iter().map(|tool| tool.name.to_owned()).collect();
        names.sort();
        assert_eq!(names, files, "one file per tool, named for it");
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(unique, names, "each name once");
    }
}
