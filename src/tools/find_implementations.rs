//! `find_implementations {filePath, line, column}`: where the symbol at the position is
//! implemented (LSP `textDocument/implementation`), each location with its
//! line's text.

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::{locations_at, position_properties};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct FindImplementations;

#[async_trait]
impl ProjectTool for FindImplementations {
    type Args = PositionArgs;

    const SPEC: Spec = Spec::project(
        "find_implementations",
        "Where the symbol at a 1-based line and column is implemented (implementations of an interface, trait or abstract method; overrides), from the language server: locations {filePath, line, column, lineText}, 1-based.",
        || object(position_properties(), &["filePath", "line", "column"]),
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        locations_at(state, project, "implementation", args).await
    }
}
