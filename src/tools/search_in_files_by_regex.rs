//! `search_in_files_by_regex`: Lines of project files matching a regular
//! expression (Rust regex syntax): {filePath, line (1-based), lineText}.
//! .gitignore honoured; files that are not UTF-8 are skipped.

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};
use crate::project::search::search_properties;

pub struct SearchInFilesByRegex;

#[async_trait]
impl Tool for SearchInFilesByRegex {
    type Args = crate::project::search::SearchArgs;

    const SPEC: Spec = Spec {
        name: "search_in_files_by_regex",
        description: "Lines of project files matching a regular expression (Rust regex syntax): {filePath, line (1-based), lineText}. .gitignore honoured; files that are not UTF-8 are skipped.",
        schema: || {
            object(
                search_properties("regexPattern", "Regular expression to find"),
                &["regexPattern"],
            )
        },
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let project = call.project()?;
        answered(crate::project::search::in_files(project, args, true).await)
    }
}
