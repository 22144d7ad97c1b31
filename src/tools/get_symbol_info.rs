//! `get_symbol_info`: What the language server says about the symbol at a
//! 1-based line and column: signature and documentation (hover), as
//! markdown.

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::lsp::PositionArgs;
use crate::project::lsp::{at_position, position_properties};
use crate::project::{Answer, Project};
use crate::state::State;
use serde_json::{Value, json};

pub struct GetSymbolInfo;

#[async_trait]
impl ProjectTool for GetSymbolInfo {
    type Args = PositionArgs;

    const SPEC: Spec = Spec::project(
        "get_symbol_info",
        "What the language server says about the symbol at a 1-based line and column: signature and documentation (hover), as markdown.",
        || object(position_properties(), &["filePath", "line", "column"]),
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        let (path, hover) = at_position(state, project, "hover", args).await?;
        let markdown = hover
            .get("markdown")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let text = if markdown.is_empty() {
            "no information about this symbol".to_owned()
        } else {
            markdown.clone()
        };
        Ok((
            text,
            json!({"filePath": project.relative(&path), "documentation": markdown}),
        ))
    }
}
