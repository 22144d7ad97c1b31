//! `getWorkspaceFolders {}`: Neovim's global cwd, the folder the lockfile
//! announces; none (and why) when it is no project (`/`, the home
//! directory or above).

use serde_json::{Value, json};

use super::{ToolSpec, json_text, workspace};
use crate::selection::file_url;
use crate::state::State;

pub const SPEC: ToolSpec = ToolSpec {
    name: "getWorkspaceFolders",
    description: "The workspace folder: Neovim's current directory.",
    schema: || json!({"type": "object", "properties": {}}),
};

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
