//! `getWorkspaceFolders {}`: Neovim's global cwd, the folder the lockfile
//! announces; none (and why) when it is no project (`/`, the home
//! directory or above).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, NoArgs, Outcome, Spec, Tool, json_text, no_arguments};
use crate::project::workspace::workspace;
use crate::state::State;
use crate::uri::file_url;

pub struct GetWorkspaceFolders;

#[async_trait]
impl Tool for GetWorkspaceFolders {
    type Args = NoArgs;

    const SPEC: Spec = Spec::editor(
        "getWorkspaceFolders",
        "The workspace folder: Neovim's current directory.",
        no_arguments,
    );

    async fn run(call: &Call<'_>, _args: NoArgs) -> Outcome {
        Ok(run(call.state).await)
    }
}

pub async fn run(state: &State) -> Value {
    match workspace(state).await {
        Ok(root) => {
            let root = root.given().to_owned();
            let name = std::path::Path::new(&root)
                .file_name()
                .map_or_else(|| root.clone(), |n| n.to_string_lossy().into_owned());
            json_text(json!({
                "success": true,
                "folders": [{"name": name, "uri": file_url(&root), "path": root}],
                "rootPath": root,
            }))
        }
        Err(error) => json_text(json!({"success": false, "folders": [], "message": error})),
    }
}
