//! `openFile {filePath, preview?, startText?, endText?, selectToEndOfLine?,
//! makeFrontmost?}`: shows a workspace file in the person's last used file
//! window (never a diff tab or a terminal) and selects from `startText` to
//! `endText`, or only loads it when `makeFrontmost` is false. Neovim has no
//! preview tabs, so `preview` changes nothing.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Call, Outcome, Spec, Tool, json_text, language_id, text_content};
use crate::nvim::seam::{self, LuaCall, OpenedFile};
use crate::project::workspace::{confine, workspace};
use crate::state::State;

pub struct OpenFile;

#[async_trait]
impl Tool for OpenFile {
    type Args = Args;

    const SPEC: Spec = Spec::editor(
        "openFile",
        "Open a file of the workspace in Neovim, optionally selecting from startText to endText.",
        || {
            json!({
                "type": "object",
                "properties": {
                    "filePath": {"type": "string", "description": "path of the file, absolute or relative to the workspace"},
                    "preview": {"type": "boolean", "description": "ignored: Neovim has no preview tabs", "default": false},
                    "startText": {"type": "string", "description": "select (or put the cursor) from the first occurrence of this text"},
                    "endText": {"type": "string", "description": "select up to the end of the first occurrence of this text after startText"},
                    "selectToEndOfLine": {"type": "boolean", "description": "extend the selection to the end of its last line", "default": false},
                    "makeFrontmost": {"type": "boolean", "description": "false: load the file without moving the cursor", "default": true},
                },
                "required": ["filePath"],
            })
        },
    );

    async fn run(call: &Call<'_>, args: Args) -> Outcome {
        Ok(run(call.state, args).await)
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
    start_text: Option<String>,
    end_text: Option<String>,
    #[serde(default)]
    select_to_end_of_line: bool,
    #[serde(default = "frontmost")]
    make_frontmost: bool,
}

fn frontmost() -> bool {
    true
}

pub async fn run(state: &State, args: Args) -> Value {
    let fail = |path: &str, message: String| {
        json_text(json!({"success": false, "filePath": path, "message": message}))
    };
    let root = match workspace(state).await {
        Ok(root) => root,
        Err(error) => return fail(&args.file_path, error),
    };
    let path = match confine(&root, &args.file_path) {
        Ok(confined) => confined.path,
        Err(why) => return fail(&args.file_path, format!("{why}: not opened")),
    };
    match tokio::fs::metadata(&path).await {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return fail(&path, format!("{path} is not a file")),
        Err(error) => return fail(&path, format!("cannot open {path}: {error}")),
    }
    let non_empty = |text: Option<String>| text.filter(|t| !t.is_empty());
    let request = seam::OpenFile {
        path: path.clone(),
        start_text: non_empty(args.start_text),
        end_text: non_empty(args.end_text),
        select_to_end_of_line: args.select_to_end_of_line,
        frontmost: args.make_frontmost,
        line: None,
        column: None,
    };
    match state
        .editor()
        .query::<OpenedFile>(LuaCall::OpenFile(request))
        .await
    {
        Ok(Some(opened)) if !args.make_frontmost => json_text(json!({
            "success": true,
            "filePath": path,
            "languageId": language_id(&opened.filetype),
            "lineCount": opened.line_count,
        })),
        Ok(Some(_)) => text_content(&[format!("Opened file: {path}")]),
        Ok(None) => fail(&path, "Neovim did not say what it opened".into()),
        Err(error) => fail(&path, format!("Neovim could not open {path}: {error}")),
    }
}
