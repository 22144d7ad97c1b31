//! `rename_refactoring`: Rename a symbol across the project with the
//! language server. The symbol is the one at the 1-based line and column,
//! else the first definition of symbolName in the file. Every changed file
//! is shown to the person as a diff (unless approval is off); the result
//! lists the files applied and declined.

use serde_json::json;

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};

pub struct RenameRefactoring;

#[async_trait]
impl Tool for RenameRefactoring {
    type Args = crate::project::edits::lsp::RenameArgs;

    const SPEC: Spec = Spec {
        name: "rename_refactoring",
        description: "Rename a symbol across the project with the language server. The symbol is the one at the 1-based line and column, else the first definition of symbolName in the file. Every changed file is shown to the person as a diff (unless approval is off); the result lists the files applied and declined.",
        schema: || {
            object(
                json!({
                    "pathInProject": {"type": "string", "description": "Path relative to the project root of a file with the symbol"},
                    "newName": {"type": "string", "description": "The new name"},
                    "symbolName": {"type": "string", "description": "The symbol's current name, when no line and column are given (or to find it on the given line)"},
                    "line": {"type": "integer", "minimum": 1, "description": "1-based line of the symbol"},
                    "column": {"type": "integer", "minimum": 1, "description": "1-based column (UTF-16 code units) of the symbol"},
                }),
                &["pathInProject", "newName"],
            )
        },
        waits_for_the_person: true,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::edits::lsp::rename(state, project, args).await)
    }
}
