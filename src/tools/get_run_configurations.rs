//! `get_run_configurations {}`: what Neovim can run for this project:
//! 'makeprg' (as `:make`), overseer.nvim's templates and neotest's
//! nearest / file / suite when those plugins are installed.

use serde_json::{Value, json};

use super::Tool;
use crate::mcp_tools::run::configurations;

pub const TOOL: Tool = Tool {
    name: "get_run_configurations",
    description: "What Neovim can run for this project: {name, kind, command?, description} for 'makeprg' (`make`, as :make runs it; its output fills the quickfix list), overseer.nvim's templates and neotest's nearest/file/suite (when those plugins are installed). execute_run_configuration runs one, after the person agrees.",
    properties: || json!({}),
    required: &[],
    waits_for_the_person: false,
    run: |state, _project, _args| {
        Box::pin(async move {
            let list = configurations(state).await?;
            let text = if list.is_empty() {
                "Nothing to run: no 'makeprg' with a Makefile, no overseer.nvim or neotest.".to_owned()
            } else {
                list.iter()
                    .map(|c| {
                        let command = c["command"]
                            .as_str()
                            .map(|command| format!(" `{command}`"))
                            .unwrap_or_default();
                        format!(
                            "{}{command}: {}",
                            c["name"].as_str().unwrap_or_default(),
                            c["description"].as_str().unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            Ok((text, json!({"configurations": Value::Array(list)})))
        })
    },
};
