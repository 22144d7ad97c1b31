//! `get_document_symbols`: The symbols of a file {name, kind, filePath,
//! line, column} (1-based), from the language server, else from the host's
//! tree-sitter outline.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct GetDocumentSymbols;

#[async_trait]
impl ProjectTool for GetDocumentSymbols {
    type Args = crate::project::lsp::FileArgs;

    const SPEC: Spec = Spec::project(
        "get_document_symbols",
        "The symbols of a file {name, kind, filePath, line, column} (1-based), from the language server, else from the host's tree-sitter outline.",
        || {
            object(
                json!({"filePath": {"type": "string", "description": "Path relative to the project root"}}),
                &["filePath"],
            )
        },
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::lsp::document_symbols(state, project, args).await
    }
}
