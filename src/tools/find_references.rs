//! `find_references`: Every reference to the symbol at a 1-based line and
//! column (its declaration included), from the language server: locations
//! {filePath, line, column, lineText}, 1-based.

use super::Tool;
use super::super::lsp::position_properties;

pub const TOOL: Tool = Tool {
    name: "find_references",
    description: "Every reference to the symbol at a 1-based line and column (its declaration included), from the language server: locations {filePath, line, column, lineText}, 1-based.",
    properties: position_properties,
    required: &["filePath", "line", "column"],
    waits_for_the_person: false,
    run: |state, project, args| Box::pin(super::super::lsp::references(state, project, args)),
};
