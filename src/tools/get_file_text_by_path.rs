//! `get_file_text_by_path`: The text of a project file as Neovim has it:
//! the buffer's text with unsaved edits when the file is loaded, else the
//! file on disk.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct GetFileTextByPath;

#[async_trait]
impl ProjectTool for GetFileTextByPath {
    type Args = crate::project::files::TextArgs;

    const SPEC: Spec = Spec::project(
        "get_file_text_by_path",
        "The text of a project file as Neovim has it: the buffer's text with unsaved edits when the file is loaded, else the file on disk.",
        || {
            object(
                json!({
                    "pathInProject": {"type": "string", "description": "Path relative to the project root"},
                    "maxLinesCount": {"type": "integer", "minimum": 1, "description": "Most lines returned (default 1000)"},
                    "truncateMode": {
                        "type": "string",
                        "enum": ["START", "MIDDLE", "END", "NONE"],
                        "description": "Which lines to keep when the file is longer: START keeps the first, END the last, MIDDLE both ends, NONE all (default START)",
                    },
                }),
                &["pathInProject"],
            )
        },
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::files::file_text(state, project, args).await
    }
}
