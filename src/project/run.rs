//! Running things for an agent, always after the person agreed in Neovim:
//! the run configurations Neovim knows (see `lua/pi-ide/mcp/run.lua`) and
//! shell commands. Lua asks, runs in a terminal window and answers later;
//! here the answer becomes the agent's: exit code, the last lines of
//! output, the quickfix entries of a `:make`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Answer, Failure, Project};
use crate::nvim::seam::{LspAnswer, LuaCall, RunRequest};
use crate::state::State;

/// Default and longest wait for a run to finish, once the person agreed.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Default and most lines of output given back.
pub const DEFAULT_LINES: u64 = 200;
pub const MAX_LINES: u64 = 2_000;
/// How long the person may take to decide, on top of the run.
const DECISION: Duration = Duration::from_secs(600);

/// Hands `call` (built around a fresh id) to Lua and waits at most `bound`.
async fn ask(
    state: &State,
    call: impl FnOnce(u64) -> LuaCall,
    bound: Duration,
) -> Result<Value, Failure> {
    let (id, answer) = state.lsp().open();
    if let Err(error) = state.editor().call(call(id)).await {
        state.lsp().forget(id);
        return Err(Failure(format!("Neovim could not be asked: {error}")));
    }
    let answer: LspAnswer = match tokio::time::timeout(bound, answer).await {
        Ok(Ok(answer)) => answer,
        _ => {
            state.lsp().forget(id);
            return Err(Failure(format!(
                "no answer from Neovim within {} s",
                bound.as_secs()
            )));
        }
    };
    match (answer.error, answer.result) {
        (Some(error), _) => Err(Failure(error)),
        (None, result) => Ok(result.unwrap_or(Value::Null)),
    }
}

/// What Neovim can run here.
pub async fn configurations(state: &State) -> Result<Vec<Value>, Failure> {
    let found = ask(
        state,
        |id| LuaCall::RunConfigurations { id },
        Duration::from_secs(10),
    )
    .await?;
    Ok(found["configurations"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// What to run, and the bounds of the call.
pub struct Run {
    pub name: Option<String>,
    pub command: Option<String>,
    pub timeout_ms: Option<u64>,
    pub max_lines: Option<u64>,
}

impl Run {
    /// One of the run configurations, by name.
    pub fn named(name: String, timeout_ms: Option<u64>, max_lines: Option<u64>) -> Run {
        Run {
            name: Some(name),
            command: None,
            timeout_ms,
            max_lines,
        }
    }

    /// A shell command.
    pub fn command(command: String, timeout_ms: Option<u64>, max_lines: Option<u64>) -> Run {
        Run {
            name: None,
            command: Some(command),
            timeout_ms,
            max_lines,
        }
    }
}

/// The schema of a tool that runs something: `what` (described by
/// `described`, required), how long to wait (`timeout`, described by
/// `timeout`) and how much output comes back.
pub fn schema(what: &str, described: Value, timeout: &str) -> Value {
    let mut properties = json!({
        "timeout": {"type": "integer", "minimum": 1, "description": timeout},
        "maxLinesCount": {"type": "integer", "minimum": 1, "description": "Last lines of output returned (default 200)"},
    });
    properties[what] = described;
    json!({"type": "object", "properties": properties, "required": [what]})
}

/// Asks the person, runs and waits; the agent's answer.
pub async fn execute(state: &State, project: &Project, run: Run) -> Answer {
    let timeout_ms = run
        .timeout_ms
        .unwrap_or(DEFAULT_TIMEOUT_MS)
        .clamp(1, MAX_TIMEOUT_MS);
    let max_lines = run.max_lines.unwrap_or(DEFAULT_LINES).clamp(1, MAX_LINES);
    let cwd = project.root.clone();
    let bound = DECISION + Duration::from_millis(timeout_ms) + Duration::from_secs(5);
    let done = ask(
        state,
        |id| {
            LuaCall::RunCommand(RunRequest {
                id,
                name: run.name,
                command: run.command,
                cwd,
                timeout_ms,
                max_lines,
            })
        },
        bound,
    )
    .await?;
    shape(project, &done, timeout_ms)
}

/// Lua's answer `{command, exit_code?, output, cut?, running?, declined?,
/// quickfix?, started?, note?}` as the agent's.
fn shape(project: &Project, done: &Value, timeout_ms: u64) -> Answer {
    let command = done["command"].as_str().unwrap_or_default();
    if done["declined"] == true {
        return Err(Failure(format!(
            "The person declined to run `{command}`; it did not run."
        )));
    }
    let output: Vec<&str> = done["output"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let cut = done["cut"] == true;
    let quickfix: Vec<Value> = done["quickfix"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            let path = item["path"].as_str().unwrap_or_default();
            json!({
                "filePath": if path.is_empty() { String::new() } else { project.relative(path) },
                "line": item["line"],
                "column": item["column"],
                "text": item["text"],
                "type": item["type"],
            })
        })
        .collect();
    let mut text = if done["started"] == true {
        format!(
            "The person agreed; {command} started. {}",
            done["note"].as_str().unwrap_or_default()
        )
    } else if done["running"] == true {
        format!(
            "The person agreed; `{command}` is still running in a terminal in Neovim after {} s. Output so far:",
            timeout_ms / 1000
        )
    } else {
        format!(
            "The person agreed; `{command}` ran in a terminal in Neovim and exited with code {}.",
            done["exit_code"]
        )
    };
    if !output.is_empty() {
        if cut {
            text.push_str(&format!("\n(the last {} lines)", output.len()));
        }
        text.push('\n');
        text.push_str(&output.join("\n"));
    }
    if !quickfix.is_empty() {
        text.push_str(&format!(
            "\nThe quickfix list has {} entries:",
            quickfix.len()
        ));
        for item in &quickfix {
            text.push_str(&format!(
                "\n{}:{}:{}: {}",
                item["filePath"].as_str().unwrap_or_default(),
                item["line"],
                item["column"],
                item["text"].as_str().unwrap_or_default()
            ));
        }
    }
    let mut structured = json!({
        "command": command,
        "exitCode": done["exit_code"],
        "running": done["running"] == true,
        "output": output,
        "limitReached": cut,
    });
    if done.get("quickfix").is_some() {
        structured["quickfix"] = json!(quickfix);
    }
    Ok((text, structured))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declined_run_is_an_error_and_a_finished_one_names_its_code() {
        let project = Project::at("/w");
        let declined = shape(
            &project,
            &json!({"command": "make", "declined": true}),
            1000,
        );
        assert!(declined.unwrap_err().0.contains("declined to run `make`"));
        let (text, structured) = shape(
            &project,
            &json!({"command": "make", "exit_code": 2, "output": ["a.c:1:2: error: x"],
                    "quickfix": [{"path": "/w/a.c", "line": 1, "column": 2, "text": "error: x", "type": "e"}]}),
            1000,
        )
        .unwrap();
        assert!(text.contains("exited with code 2"), "{text}");
        assert!(text.contains("a.c:1:2: error: x"), "{text}");
        assert_eq!(structured["exitCode"], 2);
        assert_eq!(structured["quickfix"][0]["filePath"], "a.c");
    }
}
