//! `rename_refactoring`: Rename a symbol across the project with the
//! language server. The symbol is the one at the 1-based line and column,
//! else the first definition of symbolName in the file. Every changed file
//! is shown to the person as a diff (unless approval is off); the result
//! lists the files applied and declined.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct RenameRefactoring;

#[async_trait]
impl ProjectTool for RenameRefactoring {
    type Args = crate::project::edits::lsp::RenameArgs;

    const SPEC: Spec = Spec::project(
        "rename_refactoring",
        "Rename a symbol across the project with the language server. The symbol is the one at the 1-based line and column, else the first definition of symbolName in the file. Every changed file is shown to the person as a diff (unless approval is off); the result lists the files applied and declined.",
        || {
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
    ).waiting();

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::edits::lsp::rename(state, project, args).await
    }
}
