//! `search_symbol`: Symbols whose name matches q across the workspace, from
//! the language servers (what they have indexed), else from the tree-sitter
//! outline of the open buffers: {name, kind, filePath, line, column},
//! 1-based (columns in UTF-16 code units), the project's own first.

use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct SearchSymbol;

#[async_trait]
impl ProjectTool for SearchSymbol {
    type Args = crate::project::symbol_search::Args;

    const SPEC: Spec = Spec::project(
        "search_symbol",
        "Symbols whose name matches q across the workspace, from the language servers (what they have indexed), else from the tree-sitter outline of the open buffers: {name, kind, filePath, line, column}, 1-based (columns in UTF-16 code units), the project's own first.",
        || {
            object(
                json!({
                    "q": {"type": "string", "description": "The name, or part of it, to look for"},
                    "limit": {"type": "integer", "minimum": 1, "description": "At most this many symbols (default 50)"},
                }),
                &["q"],
            )
        },
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        crate::project::symbol_search::search(state, project, args).await
    }
}
