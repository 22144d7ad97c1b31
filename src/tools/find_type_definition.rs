//! `find_type_definition {filePath, line, column}`: where the type of the symbol at the position
//! is defined (LSP `textDocument/typeDefinition`).

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::{locations_at, position_properties};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct FindTypeDefinition;

#[async_trait]
impl ProjectTool for FindTypeDefinition {
    type Args = PositionArgs;

    const SPEC: Spec = Spec::project(
        "find_type_definition",
        "Where the type of the symbol at a 1-based line and column is defined (the class of a variable, say), from the language server: locations {filePath, line, column, lineText}, 1-based.",
        || object(position_properties(), &["filePath", "line", "column"]),
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        locations_at(state, project, "type_definition", args).await
    }
}
