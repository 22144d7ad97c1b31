//! `search_in_files_by_regex`: Lines of project files matching a regular
//! expression (Rust regex syntax): {filePath, line (1-based), lineText}.
//! .gitignore honoured; files that are not UTF-8 are skipped.

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::search::search_properties;
use crate::project::{Answer, Project};
use crate::state::State;

pub struct SearchInFilesByRegex;

#[async_trait]
impl ProjectTool for SearchInFilesByRegex {
    type Args = crate::project::search::SearchArgs;

    const SPEC: Spec = Spec::project(
        "search_in_files_by_regex",
        "Lines of project files matching a regular expression (Rust regex syntax): {filePath, line (1-based), lineText}. .gitignore honoured; files that are not UTF-8 are skipped.",
        || {
            object(
                search_properties("regexPattern", "Regular expression to find"),
                &["regexPattern"],
            )
        },
    );

    async fn run(_state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::search::in_files(project, args, true).await
    }
}
