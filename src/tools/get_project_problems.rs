//! `get_project_problems`: the problems (diagnostics) of the project's
//! files that Neovim's language servers reported: for loaded files, files
//! looked at and let go of (until the file changes), and the workspace
//! reports of servers that offer them, asked at each call.

use serde_json::json;

use async_trait::async_trait;

use super::{NoArgs, ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct GetProjectProblems;

#[async_trait]
impl ProjectTool for GetProjectProblems {
    type Args = NoArgs;

    const SPEC: Spec = Spec::project(
        "get_project_problems",
        "Problems (diagnostics) of the project's files, per file; lines and columns are 1-based (columns in UTF-16 code units). Covers: files loaded in Neovim, as they are now; files opened and closed since, by the tools or the person (what their language servers last reported, kept until the file changes on disk or a server reports on it again); and what language servers that offer workspace diagnostics (LSP workspace/diagnostic) report for the whole workspace, asked at each call (2 s at most; servers that did not answer are named). Files nobody opened are not checked otherwise: use lint_files or get_file_problems for them.",
        || object(json!({}), &[]),
    );

    async fn run(state: &State, project: &Project, _args: Self::Args) -> Answer {
        crate::project::problems::project_problems(state, project).await
    }
}
