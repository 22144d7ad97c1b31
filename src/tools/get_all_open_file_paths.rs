//! `get_all_open_file_paths`: The files open in Neovim (listed buffers),
//! relative to the project root, and the active one.

use serde_json::json;

use async_trait::async_trait;

use super::{Call, NoArgs, Outcome, Spec, Tool, answered, object};

pub struct GetAllOpenFilePaths;

#[async_trait]
impl Tool for GetAllOpenFilePaths {
    type Args = NoArgs;

    const SPEC: Spec = Spec {
        name: "get_all_open_file_paths",
        description: "The files open in Neovim (listed buffers), relative to the project root, and the active one.",
        schema: || object(json!({}), &[]),
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, _args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::files::open_files(state, project).await)
    }
}
