//! `find_declaration {filePath, line, column}`: where the symbol at the position is declared
//! (LSP `textDocument/declaration`: a C prototype, an import).

use super::Tool;
use crate::mcp_tools::lsp::{at_position, locations, position_properties};

pub const TOOL: Tool = Tool {
    name: "find_declaration",
    description: "Where the symbol at a 1-based line and column is declared (a C prototype in a header, say; servers without declarations answer with the definition), from the language server: locations {filePath, line, column, lineText}, 1-based.",
    properties: position_properties,
    required: &["filePath", "line", "column"],
    waits_for_the_person: false,
    run: |state, project, args| {
        Box::pin(async move {
            let (_, found) = at_position(state, project, "find_declaration", "declaration", args).await?;
            locations(state, project, &found).await
        })
    },
};
