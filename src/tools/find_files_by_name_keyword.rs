//! `find_files_by_name_keyword`: Project files whose name contains a
//! keyword (case-insensitive), relative to the project root; .gitignore
//! honoured.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::search::timeout_schema;
use crate::project::{Answer, Project};
use crate::state::State;

pub struct FindFilesByNameKeyword;

#[async_trait]
impl ProjectTool for FindFilesByNameKeyword {
    type Args = crate::project::search::KeywordArgs;

    const SPEC: Spec = Spec::project(
        "find_files_by_name_keyword",
        "Project files whose name contains a keyword (case-insensitive), relative to the project root; .gitignore honoured.",
        || {
            object(
                json!({
                    "nameKeyword": {"type": "string", "description": "Part of the file name"},
                    "fileCountLimit": {"type": "integer", "minimum": 1, "description": "Most files returned (default 1000)"},
                    "timeout": timeout_schema(),
                }),
                &["nameKeyword"],
            )
        },
    );

    async fn run(_state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::search::by_name_keyword(project, args).await
    }
}
