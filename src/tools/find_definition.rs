//! `find_definition`: Where the symbol at a 1-based line and column is
//! defined, from the language server: locations {filePath, line, column,
//! lineText}, 1-based.

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::position_properties;

pub struct FindDefinition;

#[async_trait]
impl Tool for FindDefinition {
    type Args = PositionArgs;

    const SPEC: Spec = Spec {
        name: "find_definition",
        description: "Where the symbol at a 1-based line and column is defined, from the language server: locations {filePath, line, column, lineText}, 1-based.",
        schema: || object(position_properties(), &["filePath", "line", "column"]),
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::lsp::definition(state, project, args).await)
    }
}
