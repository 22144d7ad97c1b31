//! `getWorkspaceFolders {}`: Neovim's global cwd, the folder the lockfile
//! announces; none (and why) when it is no project (`/`, the home
//! directory or above).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, Tool, ToolSpec, json_text, workspace};
use crate::uri::file_url;
use crate::client::ClientId;
use crate::state::State;

const SPEC: ToolSpec = ToolSpec {
    name: "getWorkspaceFolders",
    description: "The workspace folder: Neovim's current directory.",
    schema: || json!({"type": "object", "properties": {}}),
};

pub const TOOL: Tool = Tool {
    spec: SPEC,
    waits_for_the_person: false,
    parse: |_| Ok(Box::new(Args)),
};

/// The tool takes no arguments.
#[derive(Debug)]
pub struct Args;

#[async_trait]
impl Call for Args {
    async fn run(self: Box<Self>, state: &State, _client: ClientId) -> Value {
        run(state).await
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
