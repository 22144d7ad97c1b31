//! `replace_text_in_file`: Replace text in a project file (the buffer's
//! text when it is open in Neovim, unsaved edits included). The person
//! reviews the change as a diff unless they turned approval off; the result
//! says whether it was applied, declined (isError) or changed by them.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "replace_text_in_file",
    description: "Replace text in a project file (the buffer's text when it is open in Neovim, unsaved edits included). The person reviews the change as a diff unless they turned approval off; the result says whether it was applied, declined (isError) or changed by them.",
    properties: || {
        json!({
            "pathInProject": {"type": "string", "description": "Path relative to the project root"},
            "oldText": {"type": "string", "description": "Text to find (exactly, newlines as \\n)"},
            "newText": {"type": "string", "description": "Text to put in its place"},
            "replaceAll": {"type": "boolean", "description": "Replace every occurrence (default true), else the first"},
            "caseSensitive": {"type": "boolean", "description": "Match case (default true)"},
        })
    },
    required: &["pathInProject", "oldText", "newText"],
    waits_for_the_person: true,
    run: |state, project, args| Box::pin(super::super::edits::text::replace_text(state, project, args)),
};
