//! `execute_terminal_command {command, timeout?, maxLinesCount?}`
//! (JetBrains' tool): a shell command run in the project root once the
//! person agreed, seeing it, in a terminal window in Neovim; its exit code
//! and last lines of output. Declined: isError. Option
//! `mcp.terminal_commands = false` takes the tool away.

use serde::Deserialize;
use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec};
use crate::project::run::{Run, execute, schema};
use crate::project::{Answer, Failure, Project};
use crate::state::State;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    command: String,
    timeout: Option<u64>,
    max_lines_count: Option<u64>,
}

pub struct ExecuteTerminalCommand;

#[async_trait]
impl ProjectTool for ExecuteTerminalCommand {
    type Args = Args;

    const SPEC: Spec = Spec::project(
        "execute_terminal_command",
        "Run a shell command in the project root, in a terminal window in Neovim. The person is asked first, seeing the exact command (declined: isError). Returns its exit code and last lines of output; one still running after the timeout keeps running in the terminal and the output so far is returned.",
        || schema("command", json!({"type": "string", "description": "The shell command ('shell' runs it)"}), "Milliseconds to wait for it to finish once it started (default 120000, at most 600000)"),
    ).waiting();

    /// Option `mcp.terminal_commands = false` takes it away.
    fn offered(state: &State) -> bool {
        state.terminal_commands()
    }

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        if args.command.trim().is_empty() {
            return Err(Failure("command must not be empty".into()));
        }
        let run = Run::command(args.command, args.timeout, args.max_lines_count);
        execute(state, project, run).await
    }
}
