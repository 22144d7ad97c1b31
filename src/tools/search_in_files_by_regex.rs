//! `search_in_files_by_regex`: Lines of project files matching a regular
//! expression (Rust regex syntax): {filePath, line (1-based), lineText}.
//! .gitignore honoured; files that are not UTF-8 are skipped.

use super::Tool;
use super::super::search::search_properties;

pub const TOOL: Tool = Tool {
    name: "search_in_files_by_regex",
    description: "Lines of project files matching a regular expression (Rust regex syntax): {filePath, line (1-based), lineText}. .gitignore honoured; files that are not UTF-8 are skipped.",
    properties: || search_properties("regexPattern", "Regular expression to find"),
    required: &["regexPattern"],
    waits_for_the_person: false,
    run: |_state, project, args| Box::pin(super::super::search::in_files(project, args, true)),
};
