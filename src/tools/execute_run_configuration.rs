//! `execute_run_configuration {name, timeout?, maxLinesCount?}`: runs one
//! of `get_run_configurations` once the person agreed, seeing the exact
//! command, in a terminal window in Neovim; its exit code and last lines of
//! output (and, for `make`, the quickfix list it filled). Declined: isError.

use serde::Deserialize;
use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec};
use crate::project::run::{Run, execute, schema};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct ExecuteRunConfiguration;

#[async_trait]
impl ProjectTool for ExecuteRunConfiguration {
    type Args = Args;

    const SPEC: Spec = Spec::project(
        "execute_run_configuration",
        "Run one of get_run_configurations by name. The person is asked first, seeing the exact command (declined: isError); it runs in a terminal window in Neovim. Returns its exit code and last lines of output; `make` also fills Neovim's quickfix list from its output, and the entries are returned.",
        || schema("name", json!({"type": "string", "description": "A name get_run_configurations listed"}), "Milliseconds to wait for it to finish once it started (default 120000, at most 600000); it keeps running after"),
    ).waiting();

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        let run = Run::named(args.name, args.timeout, args.max_lines_count);
        execute(state, project, run).await
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    name: String,
    timeout: Option<u64>,
    max_lines_count: Option<u64>,
}
