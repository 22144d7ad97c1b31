//! `checkDocumentDirty {filePath}`: whether the file's buffer has unsaved
//! changes. Only reads state, so any path may be asked about.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, FilePathArgs, Outcome, Spec, Tool, file_path_schema, json_text};
use crate::confine::links;
use crate::nvim::seam::{DocumentState, LuaCall};
use crate::project::workspace::workspace;
use crate::state::State;

pub struct CheckDocumentDirty;

#[async_trait]
impl Tool for CheckDocumentDirty {
    type Args = FilePathArgs;

    const SPEC: Spec = Spec::editor(
        "checkDocumentDirty",
        "Whether the buffer of a file has unsaved changes.",
        file_path_schema,
    );

    async fn run(call: &Call<'_>, args: FilePathArgs) -> Outcome {
        Ok(run(call.state, args).await)
    }
}

pub async fn run(state: &State, args: FilePathArgs) -> Value {
    let fail = |path: &str, message: String| {
        json_text(json!({"success": false, "filePath": path, "message": message}))
    };
    let path = match workspace(state).await {
        Ok(root) => links::absolute(root.given(), &args.file_path),
        Err(error) => return fail(&args.file_path, error),
    };
    let call = LuaCall::DocumentState { path: path.clone() };
    match state.editor().query::<DocumentState>(call).await {
        Ok(Some(document)) => json_text(json!({
            "success": true,
            "filePath": path,
            "isDirty": document.modified,
            // A buffer found by its file name always has one.
            "isUntitled": false,
        })),
        Ok(None) => fail(&path, format!("Document not open: {path}")),
        Err(error) => fail(&path, format!("cannot read the buffer of {path}: {error}")),
    }
}
