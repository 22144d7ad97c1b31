//! `replace_text_in_file`: Replace text in a project file (the buffer's
//! text when it is open in Neovim, unsaved edits included). The person
//! reviews the change as a diff unless they turned approval off; the result
//! says whether it was applied, declined (isError) or changed by them.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct ReplaceTextInFile;

#[async_trait]
impl ProjectTool for ReplaceTextInFile {
    type Args = crate::project::edits::text::ReplaceArgs;

    const SPEC: Spec = Spec::project(
        "replace_text_in_file",
        "Replace text in a project file (the buffer's text when it is open in Neovim, unsaved edits included). The person reviews the change as a diff unless they turned approval off; the result says whether it was applied, declined (isError) or changed by them.",
        || {
            object(
                json!({
                    "pathInProject": {"type": "string", "description": "Path relative to the project root"},
                    "oldText": {"type": "string", "description": "Text to find (exactly, newlines as \\n)"},
                    "newText": {"type": "string", "description": "Text to put in its place"},
                    "replaceAll": {"type": "boolean", "description": "Replace every occurrence (default true), else the first"},
                    "caseSensitive": {"type": "boolean", "description": "Match case (default true)"},
                }),
                &["pathInProject", "oldText", "newText"],
            )
        },
    ).waiting();

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::edits::text::replace_text(state, project, args).await
    }
}
