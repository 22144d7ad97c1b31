//! `get_all_open_file_paths`: The files open in Neovim (listed buffers),
//! relative to the project root, and the active one.

use serde_json::json;

use super::Tool;

pub const TOOL: Tool = Tool {
    name: "get_all_open_file_paths",
    description: "The files open in Neovim (listed buffers), relative to the project root, and the active one.",
    properties: || json!({}),
    required: &[],
    waits_for_the_person: false,
    run: |state, project, _args| Box::pin(super::super::files::open_files(state, project)),
};
