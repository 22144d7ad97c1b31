//! `find_declaration {filePath, line, column}`: where the symbol at the position is declared
//! (LSP `textDocument/declaration`: a C prototype, an import).

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::{at_position, locations, position_properties};

pub struct FindDeclaration;

#[async_trait]
impl Tool for FindDeclaration {
    type Args = PositionArgs;

    const SPEC: Spec = Spec {
        name: "find_declaration",
        description: "Where the symbol at a 1-based line and column is declared (a C prototype in a header, say; servers without declarations answer with the definition), from the language server: locations {filePath, line, column, lineText}, 1-based.",
        schema: || object(position_properties(), &["filePath", "line", "column"]),
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(
            async move {
                let (_, found) = at_position(state, project, "declaration", args).await?;
                locations(state, project, &found).await
            }
            .await,
        )
    }
}
