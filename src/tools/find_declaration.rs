//! `find_declaration {filePath, line, column}`: where the symbol at the position is declared
//! (LSP `textDocument/declaration`: a C prototype, an import).

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::{locations_at, position_properties};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct FindDeclaration;

#[async_trait]
impl ProjectTool for FindDeclaration {
    type Args = PositionArgs;

    const SPEC: Spec = Spec::project(
        "find_declaration",
        "Where the symbol at a 1-based line and column is declared (a C prototype in a header, say; servers without declarations answer with the definition), from the language server: locations {filePath, line, column, lineText}, 1-based.",
        || object(position_properties(), &["filePath", "line", "column"]),
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        locations_at(state, project, "declaration", args).await
    }
}
