//! `find_type_definition {filePath, line, column}`: where the type of the symbol at the position
//! is defined (LSP `textDocument/typeDefinition`).

use super::Tool;
use crate::mcp_tools::lsp::{at_position, locations, position_properties};

pub const TOOL: Tool = Tool {
    name: "find_type_definition",
    description: "Where the type of the symbol at a 1-based line and column is defined (the class of a variable, say), from the language server: locations {filePath, line, column, lineText}, 1-based.",
    properties: position_properties,
    required: &["filePath", "line", "column"],
    waits_for_the_person: false,
    run: |state, project, args| {
        Box::pin(async move {
            let (_, found) = at_position(state, project, "find_type_definition", "type_definition", args).await?;
            locations(state, project, &found).await
        })
    },
};
