//! `apply_code_action`: Apply a code action get_code_actions listed, by id.
//! Its edits are shown to the person as diffs (unless approval is off).
//! Actions that only run a command on the language server are not
//! supported.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "apply_code_action",
    description: "Apply a code action get_code_actions listed, by id. Its edits are shown to the person as diffs (unless approval is off). Actions that only run a command on the language server are not supported.",
    properties: || json!({"id": {"type": "string", "description": "An id from get_code_actions"}}),
    required: &["id"],
    waits_for_the_person: true,
    run: |state, project, args| Box::pin(super::super::edits::lsp::apply_action(state, project, args)),
};
