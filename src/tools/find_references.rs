//! `find_references`: Every reference to the symbol at a 1-based line and
//! column (its declaration included), from the language server: locations
//! {filePath, line, column, lineText}, 1-based.

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::position_properties;

pub struct FindReferences;

#[async_trait]
impl Tool for FindReferences {
    type Args = PositionArgs;

    const SPEC: Spec = Spec {
        name: "find_references",
        description: "Every reference to the symbol at a 1-based line and column (its declaration included), from the language server: locations {filePath, line, column, lineText}, 1-based.",
        schema: || object(position_properties(), &["filePath", "line", "column"]),
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::lsp::references(state, project, args).await)
    }
}
