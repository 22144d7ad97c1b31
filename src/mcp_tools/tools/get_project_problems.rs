//! `get_project_problems`: Every problem (diagnostic) Neovim knows, per
//! file; lines and columns are 1-based.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "get_project_problems",
    description: "Every problem (diagnostic) Neovim knows, per file; lines and columns are 1-based.",
    properties: || json!({}),
    required: &[],
    waits_for_the_person: false,
    run: |state, project, args| Box::pin(super::super::problems::project_problems(state, project, args)),
};
