//! `search_in_files_by_text`: Lines of project files containing a text:
//! {filePath, line (1-based), lineText}. .gitignore honoured; files that
//! are not UTF-8 are skipped.

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::search::search_properties;
use crate::project::{Answer, Project};
use crate::state::State;

pub struct SearchInFilesByText;

#[async_trait]
impl ProjectTool for SearchInFilesByText {
    type Args = crate::project::search::SearchArgs;

    const SPEC: Spec = Spec::project(
        "search_in_files_by_text",
        "Lines of project files containing a text: {filePath, line (1-based), lineText}. .gitignore honoured; files that are not UTF-8 are skipped.",
        || {
            object(
                search_properties("searchText", "Text to find"),
                &["searchText"],
            )
        },
    );

    async fn run(_state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::search::in_files(project, args, false).await
    }
}
