//! `find_type_definition {filePath, line, column}`: where the type of the symbol at the position
//! is defined (LSP `textDocument/typeDefinition`).

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::{at_position, locations, position_properties};

pub struct FindTypeDefinition;

#[async_trait]
impl Tool for FindTypeDefinition {
    type Args = PositionArgs;

    const SPEC: Spec = Spec {
        name: "find_type_definition",
        description: "Where the type of the symbol at a 1-based line and column is defined (the class of a variable, say), from the language server: locations {filePath, line, column, lineText}, 1-based.",
        schema: || object(position_properties(), &["filePath", "line", "column"]),
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(
            async move {
                let (_, found) = at_position(state, project, "type_definition", args).await?;
                locations(state, project, &found).await
            }
            .await,
        )
    }
}
