//! `get_document_symbols`: The symbols of a file {name, kind, filePath,
//! line, column} (1-based), from the language server, else from the host's
//! tree-sitter outline.

use serde_json::json;

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};

pub struct GetDocumentSymbols;

#[async_trait]
impl Tool for GetDocumentSymbols {
    type Args = crate::project::lsp::FileArgs;

    const SPEC: Spec = Spec {
        name: "get_document_symbols",
        description: "The symbols of a file {name, kind, filePath, line, column} (1-based), from the language server, else from the host's tree-sitter outline.",
        schema: || {
            object(
                json!({"filePath": {"type": "string", "description": "Path relative to the project root"}}),
                &["filePath"],
            )
        },
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::lsp::document_symbols(state, project, args).await)
    }
}
