//! `find_implementations {filePath, line, column}`: where the symbol at the position is
//! implemented (LSP `textDocument/implementation`), each location with its
//! line's text.

use super::Tool;
use crate::mcp_tools::lsp::{at_position, locations, position_properties};

pub const TOOL: Tool = Tool {
    name: "find_implementations",
    description: "Where the symbol at a 1-based line and column is implemented (implementations of an interface, trait or abstract method; overrides), from the language server: locations {filePath, line, column, lineText}, 1-based.",
    properties: position_properties,
    required: &["filePath", "line", "column"],
    waits_for_the_person: false,
    run: |state, project, args| {
        Box::pin(async move {
            let (_, found) = at_position(state, project, "find_implementations", "implementation", args).await?;
            locations(state, project, &found).await
        })
    },
};
