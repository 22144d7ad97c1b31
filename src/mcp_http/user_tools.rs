//! The tools a Neovim config registers in Lua
//! (`require("pi-ide.mcp").register_tool`): listed after the built-in ones,
//! called by handing the arguments to the Lua handler and waiting, boundedly,
//! for its callback; and the edits such a tool proposes
//! (`require("pi-ide.mcp").propose_edit`), which go through the same
//! approval as every other MCP edit.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::{TOOLS, user_schema};
use crate::nvim::seam::{LuaCall, ProposedEdit, UserToolCall, UserToolResult, UserToolSpec};
use crate::project::edits::current::Current;
use crate::project::edits::{Change, propose};
use crate::project::{Answer, Failure, Project};
use crate::state::State;
use crate::tools::PROJECT_PATH;

/// How long a call waits for a Lua handler's callback.
const TIMEOUT: Duration = Duration::from_secs(300);

/// `tools` as Lua registered them now, keeping those the endpoint can
/// serve; the person is told about the others.
pub fn changed(state: &State, tools: Vec<UserToolSpec>) {
    let mut kept: Vec<UserToolSpec> = Vec::with_capacity(tools.len());
    let mut refused = vec![];
    for tool in tools {
        if TOOLS
            .iter()
            .any(|built_in| built_in.spec().name == tool.name)
        {
            refused.push(format!("{}: a built-in tool has that name", tool.name));
        } else if kept.iter().any(|known| known.name == tool.name) {
            refused.push(format!("{}: registered twice", tool.name));
        } else if let Some(problem) = user_schema::problem(&tool.input_schema) {
            refused.push(format!("{}: {problem}", tool.name));
        } else {
            kept.push(tool);
        }
    }
    if !refused.is_empty() {
        let message = format!("MCP tools not served: {}", refused.join("; "));
        tracing::warn!("{message}");
        state.editor().push(LuaCall::Refused { message });
    }
    if state.user_tools().set(kept) {
        tracing::info!("registered MCP tools changed");
    }
}

/// `[{name, description, inputSchema}]` of the registered tools, each
/// schema with `projectPath`.
pub fn list(state: &State) -> Vec<Value> {
    state
        .user_tools()
        .list()
        .into_iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": user_schema::served(&tool.input_schema),
            })
        })
        .collect()
}

/// Runs registered tool `name` in Lua; `None` when there is none. A
/// `projectPath` is checked as for the built-in tools (refused outside
/// this Neovim's roots) and reaches the handler as Neovim spells it.
pub async fn call(state: &State, name: &str, mut arguments: Value) -> Option<Answer> {
    let tool = state.user_tools().get(name)?;
    if arguments.get(PROJECT_PATH).is_some() {
        match Project::open(state, &arguments).await {
            Ok(project) => arguments[PROJECT_PATH] = Value::String(project.root),
            Err(failure) => return Some(Err(failure)),
        }
    }
    let (id, answer) = state.lsp().open();
    let call = LuaCall::UserTool(UserToolCall {
        id,
        name: tool.name.clone(),
        arguments,
    });
    if let Err(error) = state.editor().call(call).await {
        state.lsp().forget(id);
        return Some(Err(Failure(format!(
            "Neovim could not run {name}: {error}"
        ))));
    }
    let answer = match tokio::time::timeout(TIMEOUT, answer).await {
        Ok(Ok(answer)) => answer,
        _ => {
            state.lsp().forget(id);
            return Some(Err(Failure(format!(
                "{name} gave no result within {} s",
                TIMEOUT.as_secs()
            ))));
        }
    };
    Some(match (answer.error, answer.result) {
        (Some(error), _) => Err(Failure(error)),
        (None, result) => Ok(shaped(
            result
                .and_then(|result| serde_json::from_value(result).ok())
                .unwrap_or_default(),
        )),
    })
}

/// A handler's result as text and `structuredContent` (always an object):
/// a table is both, as JSON; a list goes in `{result}`.
fn shaped(result: UserToolResult) -> (String, Value) {
    match result.table {
        Some(table) => {
            let text = table.to_string();
            let structured = match table {
                Value::Object(_) => table,
                list => json!({"result": list}),
            };
            (text, structured)
        }
        None => {
            let text = result.text.unwrap_or_default();
            let structured = json!({"text": text});
            (text, structured)
        }
    }
}

/// Proposes a Lua tool's edit in the project of Neovim's cwd and tells Lua
/// what became of it.
pub async fn propose_from_lua(state: Arc<State>, edit: ProposedEdit) {
    let id = edit.id;
    let outcome = proposed(&state, edit).await;
    let result = match outcome {
        Ok((text, structured)) => json!({"ok": true, "text": text, "structured": structured}),
        Err(Failure(text)) => json!({"ok": false, "text": text}),
    };
    if let Err(error) = state
        .editor()
        .call(LuaCall::EditDecided { id, result })
        .await
    {
        tracing::warn!("cannot tell Lua what became of edit {id}: {error}");
    }
}

async fn proposed(state: &State, edit: ProposedEdit) -> Answer {
    let project = Project::open(state, &json!({})).await?;
    let mut changes = Vec::with_capacity(edit.files.len());
    for file in edit.files {
        let confined = project.confine(&file.path)?;
        let before = Current::read(state, &confined).await?;
        changes.push(Change {
            path: confined.path,
            before,
            after: file.text,
        });
    }
    let title = edit
        .title
        .unwrap_or_else(|| "an MCP tool of your config".into());
    propose(state, &project, &title, changes).await
}
