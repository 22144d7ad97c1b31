//! `get_symbol_info`: What the language server says about the symbol at a
//! 1-based line and column: signature and documentation (hover), as
//! markdown.

use async_trait::async_trait;

use super::{Call, Outcome, Spec, Tool, answered, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::position_properties;

pub struct GetSymbolInfo;

#[async_trait]
impl Tool for GetSymbolInfo {
    type Args = PositionArgs;

    const SPEC: Spec = Spec {
        name: "get_symbol_info",
        description: "What the language server says about the symbol at a 1-based line and column: signature and documentation (hover), as markdown.",
        schema: || object(position_properties(), &["filePath", "line", "column"]),
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(call: &Call<'_>, args: Self::Args) -> Outcome {
        let (state, project) = (call.state, call.project()?);
        answered(crate::project::lsp::symbol_info(state, project, args).await)
    }
}
