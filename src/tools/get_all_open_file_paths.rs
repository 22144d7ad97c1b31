//! `get_all_open_file_paths`: The files open in Neovim (listed buffers),
//! relative to the project root, and the active one.

use serde_json::json;

use async_trait::async_trait;

use super::{NoArgs, ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct GetAllOpenFilePaths;

#[async_trait]
impl ProjectTool for GetAllOpenFilePaths {
    type Args = NoArgs;

    const SPEC: Spec = Spec::project(
        "get_all_open_file_paths",
        "The files open in Neovim (listed buffers), relative to the project root, and the active one.",
        || object(json!({}), &[]),
    );

    async fn run(state: &State, project: &Project, _args: Self::Args) -> Answer {
        crate::project::files::open_files(state, project).await
    }
}
