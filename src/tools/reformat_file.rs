//! `reformat_file`: Reformat a project file with its language server (LSP
//! formatting). The person reviews the change as a diff unless they turned
//! approval off.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "reformat_file",
    description: "Reformat a project file with its language server (LSP formatting). The person reviews the change as a diff unless they turned approval off.",
    properties: || json!({"path": {"type": "string", "description": "Path relative to the project root"}}),
    required: &["path"],
    waits_for_the_person: true,
    run: |state, project, args| Box::pin(super::super::edits::lsp::reformat(state, project, args)),
};
