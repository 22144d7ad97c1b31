//! `saveDocument {filePath}`: writes a workspace file's buffer with `:write`,
//! never a pi-ide diff buffer, never with a prompt (a file changed on disk
//! since Neovim read it is refused, not overwritten), and never where a
//! link swapped in since the path was checked would lead.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, FilePathArgs, Outcome, Spec, Tool, file_path_schema, json_text};
use crate::nvim::seam::{LuaCall, SaveOutcome};
use crate::project::workspace::{confine, workspace};
use crate::state::State;

pub struct SaveDocument;

#[async_trait]
impl Tool for SaveDocument {
    type Args = FilePathArgs;

    const SPEC: Spec = Spec::editor(
        "saveDocument",
        "Write the unsaved changes of a workspace file's buffer to disk.",
        file_path_schema,
    );

    async fn run(call: &Call<'_>, args: FilePathArgs) -> Outcome {
        Ok(run(call.state, args).await)
    }
}

pub async fn run(state: &State, args: FilePathArgs) -> Value {
    let answer = |path: &str, success: bool, saved: bool, message: String| {
        json_text(json!({"success": success, "filePath": path, "saved": saved, "message": message}))
    };
    let root = match workspace(state).await {
        Ok(root) => root,
        Err(error) => return answer(&args.file_path, false, false, error),
    };
    let confined = match confine(&root, &args.file_path) {
        Ok(confined) => confined,
        Err(why) => return answer(&args.file_path, false, false, format!("{why}: not saved")),
    };
    let path = confined.path.clone();
    let call = LuaCall::SaveDocument {
        path: confined.path,
        real: confined.real.to_string_lossy().into_owned(),
    };
    match state.editor().query::<SaveOutcome>(call).await {
        Ok(Some(outcome)) => answer(&path, outcome.ok, outcome.saved, outcome.message),
        Ok(None) => answer(&path, false, false, format!("Document not open: {path}")),
        Err(error) => answer(&path, false, false, format!("cannot save {path}: {error}")),
    }
}
