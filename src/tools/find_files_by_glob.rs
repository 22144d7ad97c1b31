//! `find_files_by_glob`: Project files whose path relative to the project
//! root matches a glob (`src/**/*.rs`; a pattern without `/` matches file
//! names at any depth). Files ignored by .gitignore are left out unless
//! addExcluded.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::search::timeout_schema;
use crate::project::{Answer, Project};
use crate::state::State;

pub struct FindFilesByGlob;

#[async_trait]
impl ProjectTool for FindFilesByGlob {
    type Args = crate::project::search::GlobArgs;

    const SPEC: Spec = Spec::project(
        "find_files_by_glob",
        "Project files whose path relative to the project root matches a glob (`src/**/*.rs`; a pattern without `/` matches file names at any depth). Files ignored by .gitignore are left out unless addExcluded.",
        || {
            object(
                json!({
                    "globPattern": {"type": "string", "description": "Glob relative to the project root"},
                    "subDirectoryRelativePath": {"type": "string", "description": "Search only this directory, relative to the project root"},
                    "addExcluded": {"type": "boolean", "description": "Also files ignored by .gitignore (default false)"},
                    "fileCountLimit": {"type": "integer", "minimum": 1, "description": "Most files returned (default 1000)"},
                    "timeout": timeout_schema(),
                }),
                &["globPattern"],
            )
        },
    );

    async fn run(_state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::search::by_glob(project, args).await
    }
}
