//! `get_run_configurations {}`: what Neovim can run for this project:
//! 'makeprg' (as `:make`), overseer.nvim's templates and neotest's
//! nearest / file / suite when those plugins are installed.

use serde_json::{Value, json};

use async_trait::async_trait;

use super::{NoArgs, ProjectTool, Spec, object};
use crate::project::run::configurations;
use crate::project::{Answer, Project};
use crate::state::State;

pub struct GetRunConfigurations;

#[async_trait]
impl ProjectTool for GetRunConfigurations {
    type Args = NoArgs;

    const SPEC: Spec = Spec::project(
        "get_run_configurations",
        "What Neovim can run for this project: {name, kind, command?, description} for 'makeprg' (`make`, as :make runs it; its output fills the quickfix list), overseer.nvim's templates and neotest's nearest/file/suite (when those plugins are installed). execute_run_configuration runs one, after the person agrees.",
        || object(json!({}), &[]),
    );

    async fn run(state: &State, _project: &Project, _args: Self::Args) -> Answer {
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
    }
}
