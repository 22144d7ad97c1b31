//! `find_implementations {filePath, line, column}`: where the symbol at the position is
//! implemented (LSP `textDocument/implementation`), each location with its
//! line's text.

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::{at_position, locations, position_properties};

pub struct FindImplementations;

#[async_trait]
impl Tool for FindImplementations {
    type Args = PositionArgs;

    const SPEC: Spec = Spec {
        name: "find_implementations",
        description: "Where the symbol at a 1-based line and column is implemented (implementations of an interface, trait or abstract method; overrides), from the language server: locations {filePath, line, column, lineText}, 1-based.",
        schema: || object(position_properties(), &["filePath", "line", "column"]),
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(
            async move {
                let (_, found) = at_position(state, project, "implementation", args).await?;
                locations(state, project, &found).await
            }
            .await,
        )
    }
}
