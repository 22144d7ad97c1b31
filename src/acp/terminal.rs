//! `terminal/*`: an agent's command runs in a Neovim terminal buffer the
//! person can see (Lua starts it; argv, or the agent's own shell line
//! through `sh -c` only when it sent one), cwd inside the project. The
//! host keeps each terminal's exit; Lua keeps its output, of which the
//! agent gets the last `outputByteLimit` bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value as Json, json};
use tokio::sync::watch;

use super::{Chat, next_id};
use crate::nvim::seam::{LuaCall, TerminalExit, TerminalOutput};
use crate::project::Project;
use crate::state::State;

/// Output kept for an agent that names no limit.
const DEFAULT_OUTPUT_LIMIT: u64 = 1 << 20;
/// Terminals one chat may hold at once.
const MAX_TERMINALS: usize = 16;

/// Every live terminal: its chat and its exit, once it ended.
#[derive(Default)]
pub struct Terminals {
    live: Mutex<HashMap<u64, Terminal>>,
}

struct Terminal {
    chat: u64,
    exit: watch::Sender<Option<TerminalExit>>,
}

impl Terminals {
    pub fn exited(&self, exit: TerminalExit) {
        if let Some(terminal) = crate::mutex::lock(&self.live).get(&exit.id) {
            terminal.exit.send_replace(Some(exit));
        }
    }

    fn exit_of(&self, id: u64, chat: u64) -> Result<watch::Receiver<Option<TerminalExit>>, String> {
        match crate::mutex::lock(&self.live).get(&id) {
            Some(terminal) if terminal.chat == chat => Ok(terminal.exit.subscribe()),
            _ => Err(format!("no terminal term-{id} in this session")),
        }
    }
}

/// `terminal/create`: `{terminalId}` once Lua started it.
pub async fn create(
    state: &State,
    chat: &Chat,
    terminals: &Terminals,
    request: &Json,
) -> Result<Json, String> {
    let command = request["command"]
        .as_str()
        .ok_or("command must be a string")?;
    let args: Vec<&str> = request["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    let project = Project::open(state, &json!({"projectPath": chat.cwd}))
        .await
        .map_err(|f| f.0)?;
    let cwd = match request["cwd"].as_str() {
        Some(cwd) => project.confine(cwd).map_err(|f| f.0)?.path,
        None => chat.cwd.clone(),
    };
    let env: serde_json::Map<String, Json> = request["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|var| Some((var["name"].as_str()?.to_owned(), var["value"].clone())))
        .collect();
    let argv: Vec<String> = match args.is_empty() && is_shell_line(command) {
        true => vec!["sh".into(), "-c".into(), command.into()],
        false => std::iter::once(command)
            .chain(args)
            .map(str::to_owned)
            .collect(),
    };
    let id = next_id();
    {
        let mut live = crate::mutex::lock(&terminals.live);
        if live.values().filter(|t| t.chat == chat.id).count() >= MAX_TERMINALS {
            return Err(format!(
                "at most {MAX_TERMINALS} terminals at once; release one"
            ));
        }
        live.insert(
            id,
            Terminal {
                chat: chat.id,
                exit: watch::channel(None).0,
            },
        );
    }
    let limit = request["outputByteLimit"]
        .as_u64()
        .unwrap_or(DEFAULT_OUTPUT_LIMIT);
    let started = state
        .editor()
        .call(LuaCall::ChatTerminal(json!({
            "id": id, "chat": chat.id, "argv": argv, "env": env, "cwd": cwd, "limit": limit,
        })))
        .await;
    if let Err(error) = started {
        crate::mutex::lock(&terminals.live).remove(&id);
        return Err(format!("the terminal could not start: {error}"));
    }
    Ok(json!({"terminalId": format!("term-{id}")}))
}

/// `terminal/output`: `{output, truncated, exitStatus?}`.
pub async fn output(
    state: &State,
    chat: &Chat,
    terminals: &Terminals,
    request: &Json,
) -> Result<Json, String> {
    let id = terminal_id(request)?;
    let exit = terminals.exit_of(id, chat.id)?.borrow().clone();
    let shown = state
        .editor()
        .query::<TerminalOutput>(LuaCall::ChatTerminalOutput { id })
        .await?
        .unwrap_or_default();
    let mut answer = json!({"output": shown.output, "truncated": shown.truncated});
    if let Some(exit) = exit {
        answer["exitStatus"] = exit_status(&exit);
    }
    Ok(answer)
}

/// `terminal/wait_for_exit`: `{exitCode, signal}` once it ended.
pub async fn wait_for_exit(
    chat: &Chat,
    terminals: &Terminals,
    request: &Json,
) -> Result<Json, String> {
    let id = terminal_id(request)?;
    let mut exit = terminals.exit_of(id, chat.id)?;
    let ended = exit
        .wait_for(Option::is_some)
        .await
        .map_err(|_| "the terminal was released".to_owned())?;
    Ok(exit_status(ended.as_ref().expect("waited for an exit")))
}

/// `terminal/kill` (`release`: also `terminal/release`, which forgets it).
pub async fn kill(
    state: &State,
    chat: &Chat,
    terminals: &Terminals,
    request: &Json,
    release: bool,
) -> Result<Json, String> {
    let id = terminal_id(request)?;
    terminals.exit_of(id, chat.id)?;
    if release {
        crate::mutex::lock(&terminals.live).remove(&id);
    }
    state
        .editor()
        .call(LuaCall::ChatTerminalKill { id, release })
        .await?;
    Ok(json!({}))
}

fn terminal_id(request: &Json) -> Result<u64, String> {
    let given = request["terminalId"].as_str().unwrap_or_default();
    given
        .strip_prefix("term-")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no terminal {given}"))
}

fn exit_status(exit: &TerminalExit) -> Json {
    json!({"exitCode": exit.exit_code, "signal": exit.signal})
}

/// A command with no arguments that only a shell can run (`ls -la | wc`).
fn is_shell_line(command: &str) -> bool {
    command.contains(|c: char| c.is_whitespace() || "|&;<>()$`\\\"'*?[]#~=%".contains(c))
}

/// Terminals of a chat whose session ended: forgotten (their buffers stay).
pub fn forget_chat(terminals: &Arc<Terminals>, chat: u64) {
    crate::mutex::lock(&terminals.live).retain(|_, terminal| terminal.chat != chat);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_command_line_goes_through_a_shell() {
        assert!(!is_shell_line("cargo"));
        assert!(!is_shell_line("/usr/bin/env"));
        assert!(is_shell_line("ls -la"));
        assert!(is_shell_line("echo $HOME"));
        assert_eq!(terminal_id(&json!({"terminalId": "term-7"})), Ok(7));
        assert!(terminal_id(&json!({"terminalId": "x"})).is_err());
    }
}
