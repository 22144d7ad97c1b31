//! `get_code_actions`: The language servers' code actions (quick fixes,
//! refactorings) at a 1-based position or range, with the diagnostics
//! there: [{id, title, kind}]. apply_code_action applies one.

use serde_json::json;

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};

pub struct GetCodeActions;

#[async_trait]
impl Tool for GetCodeActions {
    type Args = crate::project::edits::lsp::ActionsArgs;

    const SPEC: Spec = Spec {
        name: "get_code_actions",
        description: "The language servers' code actions (quick fixes, refactorings) at a 1-based position or range, with the diagnostics there: [{id, title, kind}]. apply_code_action applies one.",
        schema: || {
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
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::edits::lsp::code_actions(state, project, args).await)
    }
}
