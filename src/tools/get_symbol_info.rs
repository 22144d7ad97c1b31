//! `get_symbol_info`: What the language server says about the symbol at a
//! 1-based line and column: signature and documentation (hover), as
//! markdown.

use super::Tool;
use super::super::lsp::position_properties;

pub const TOOL: Tool = Tool {
    name: "get_symbol_info",
    description: "What the language server says about the symbol at a 1-based line and column: signature and documentation (hover), as markdown.",
    properties: position_properties,
    required: &["filePath", "line", "column"],
    waits_for_the_person: false,
    run: |state, project, args| Box::pin(super::super::lsp::symbol_info(state, project, args)),
};
