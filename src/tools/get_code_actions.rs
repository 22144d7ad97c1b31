//! `get_code_actions`: The language servers' code actions (quick fixes,
//! refactorings) at a 1-based position or range, with the diagnostics
//! there: [{id, title, kind}]. apply_code_action applies one.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct GetCodeActions;

#[async_trait]
impl ProjectTool for GetCodeActions {
    type Args = crate::project::edits::lsp::ActionsArgs;

    const SPEC: Spec = Spec::project(
        "get_code_actions",
        "The language servers' code actions (quick fixes, refactorings) at a 1-based position or range, with the diagnostics there: [{id, title, kind}]. apply_code_action applies one.",
        || {
            object(
                json!({
                    "filePath": {"type": "string", "description": "Path relative to the project root"},
                    "line": {"type": "integer", "minimum": 1, "description": "1-based line"},
                    "column": {"type": "integer", "minimum": 1, "description": "1-based column (UTF-16 code units)"},
                    "endLine": {"type": "integer", "minimum": 1, "description": "1-based last line of a range (default: line)"},
                    "endColumn": {"type": "integer", "minimum": 1, "description": "1-based column where the range ends (default: column)"},
                }),
                &["filePath", "line", "column"],
            )
        },
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::edits::lsp::code_actions(state, project, args).await
    }
}
