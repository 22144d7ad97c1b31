//! `checkDocumentDirty {filePath}`: whether the file's buffer has unsaved
//! changes. Only reads state, so any path may be asked about.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, Tool, FilePathArgs, ToolError, ToolSpec, arguments, file_path_schema, json_text, workspace};
use crate::confine::links;
use crate::nvim::seam::{DocumentState, LuaCall};
use crate::client::ClientId;
use crate::state::State;

const SPEC: ToolSpec = ToolSpec {
    name: "checkDocumentDirty",
    description: "Whether the buffer of a file has unsaved changes.",
    schema: file_path_schema,
};

pub const TOOL: Tool = Tool {
    spec: SPEC,
    waits_for_the_person: false,
    parse: |args| Ok(Box::new(parse(args)?)),
};

#[async_trait]
impl Call for Args {
    async fn run(self: Box<Self>, state: &State, _client: ClientId) -> Value {
        run(state, *self).await
    }
}

/// The file asked about.
#[derive(Debug)]
pub struct Args(FilePathArgs);

pub fn parse(args: Value) -> Result<Args, ToolError> {
    arguments("checkDocumentDirty", args).map(Args)
}

pub async fn run(state: &State, Args(args): Args) -> Value {
    let fail = |path: &str, message: String| {
        json_text(json!({"success": false, "filePath": path, "message": message}))
    };
    let path = match workspace(state).await {
        Ok(root) => links::absolute(root.given(), &args.file_path),
        Err(error) => return fail(&args.file_path, error),
    };
    let call = LuaCall::DocumentState { path: path.clone() };
    match state.editor.query::<DocumentState>(call).await {
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
