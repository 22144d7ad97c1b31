//! `find_references`: Every reference to the symbol at a 1-based line and
//! column (its declaration included), from the language server: locations
//! {filePath, line, column, lineText}, 1-based.

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::{locations_at, position_properties};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct FindReferences;

#[async_trait]
impl ProjectTool for FindReferences {
    type Args = PositionArgs;

    const SPEC: Spec = Spec::project(
        "find_references",
        "Every reference to the symbol at a 1-based line and column (its declaration included), from the language server: locations {filePath, line, column, lineText}, 1-based.",
        || object(position_properties(), &["filePath", "line", "column"]),
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        locations_at(state, project, "references", args).await
    }
}
