//! The edit tools language servers answer: `reformat_file {path}`,
//! `rename_refactoring {pathInProject, newName, symbolName?, line?,
//! column?}`, `get_code_actions {filePath, line, column, endLine?,
//! endColumn?}` and `apply_code_action {id}`. Lua makes the request
//! without blocking Neovim and passes the server's edit on with its offset
//! encoding; here each file's edits are applied to the text it holds
//! ([`super::text_edits`]) and the texts go through [`super::propose`].
//! Positions here are 1-based, UTF-16 columns.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::super::{Answer, Failure, Project};
use super::current::Current;
use super::{Change, propose, text_edits};
use crate::nvim::seam::{LspEditQuery, LuaCall};
use crate::project::lsp_answers::Encoding;
use crate::state::State;

/// Bound of one request in Neovim; a cold server analysing a project for
/// a rename takes seconds.
const TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, Deserialize)]
pub struct ReformatArgs {
    path: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenameArgs {
    path_in_project: String,
    new_name: String,
    symbol_name: Option<String>,
    line: Option<u64>,
    column: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionsArgs {
    file_path: String,
    line: u64,
    column: u64,
    end_line: Option<u64>,
    end_column: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub struct ApplyArgs {
    id: Value,
}

/// 1-based to 0-based.
fn zero(n: u64) -> u64 {
    n.max(1) - 1
}

/// Starts `query` in Lua and waits for its answer's result.
async fn ask(state: &State, project: &Project, mut query: LspEditQuery) -> Result<Value, Failure> {
    let (id, answer) = state.lsp().open();
    query.id = id;
    query.timeout_ms = TIMEOUT.as_millis() as u64;
    let path = query.path.clone();
    if let Err(e) = state.editor().call(LuaCall::LspEdit(query)).await {
        state.lsp().forget(id);
        return Err(Failure(format!(
            "Neovim could not ask its language servers: {e}"
        )));
    }
    let answer = match tokio::time::timeout(TIMEOUT + Duration::from_secs(2), answer).await {
        Ok(Ok(answer)) => answer,
        _ => {
            state.lsp().forget(id);
            return Err(Failure(format!(
                "no answer from Neovim's language servers within {} s",
                TIMEOUT.as_secs()
            )));
        }
    };
    if answer.no_server {
        return Err(Failure(format!(
            "no language server for {}",
            project.relative(&path)
        )));
    }
    match (answer.error, answer.result) {
        (Some(error), _) => Err(Failure(error)),
        (None, result) => Ok(result.unwrap_or(Value::Null)),
    }
}

/// The answer's `{edit, encoding}` (a `WorkspaceEdit` and the server's
/// offset encoding) as changes, each file's edits applied here to the text
/// it holds now; refused as a whole when any file lies outside the project
/// root.
async fn changes(state: &State, project: &Project, result: &Value) -> Result<Vec<Change>, Failure> {
    let encoding = Encoding::parse(result.get("encoding").and_then(Value::as_str));
    let files = text_edits::by_file(result.get("edit").unwrap_or(&Value::Null)).map_err(Failure)?;
    let mut outside = vec![];
    let mut changes = vec![];
    for (path, edits) in files {
        match project.confine(&path) {
            Ok(file) => {
                let before = Current::read(state, &file).await?;
                if !before.exists {
                    return Err(Failure(format!(
                        "the edit changes {}, which does not exist; nothing was changed",
                        project.relative(&path)
                    )));
                }
                let after = text_edits::apply(&before.lf_text(), &edits, encoding);
                changes.push(Change {
                    path: file.path,
                    before,
                    after,
                });
            }
            Err(_) => outside.push(path),
        }
    }
    if !outside.is_empty() {
        return Err(Failure(format!(
            "the edit would change files outside the project root {}: {}; nothing was changed",
            project.root,
            outside.join(", ")
        )));
    }
    Ok(changes)
}

pub async fn reformat(state: &State, project: &Project, args: ReformatArgs) -> Answer {
    let path = project.resolve(&args.path)?;
    let query = LspEditQuery {
        kind: "format",
        path,
        ..Default::default()
    };
    let result = ask(state, project, query).await?;
    let changes = changes(state, project, &result).await?;
    propose(state, project, "reformat_file", changes).await
}

pub async fn rename(state: &State, project: &Project, args: RenameArgs) -> Answer {
    if args.new_name.trim().is_empty() {
        return Err(Failure("newName must not be empty".into()));
    }
    if args.line.is_none() && args.symbol_name.is_none() {
        return Err(Failure(
            "say which symbol: line and column, or symbolName".into(),
        ));
    }
    let path = project.resolve(&args.path_in_project)?;
    let query = LspEditQuery {
        kind: "rename",
        path,
        line: args.line.map(zero),
        character: args.line.and(args.column).map(zero),
        new_name: Some(args.new_name),
        symbol_name: args.symbol_name,
        ..Default::default()
    };
    let result = ask(state, project, query).await?;
    let changes = changes(state, project, &result).await?;
    if changes.is_empty() {
        return Err(Failure(
            "the language server found nothing to rename there".into(),
        ));
    }
    propose(state, project, "rename_refactoring", changes).await
}

pub async fn code_actions(state: &State, project: &Project, args: ActionsArgs) -> Answer {
    let path = project.resolve(&args.file_path)?;
    let query = LspEditQuery {
        kind: "code_actions",
        path,
        line: Some(zero(args.line)),
        character: Some(zero(args.column)),
        end_line: Some(zero(args.end_line.unwrap_or(args.line))),
        end_character: Some(zero(args.end_column.unwrap_or(args.column))),
        ..Default::default()
    };
    let result = ask(state, project, query).await?;
    let actions: Vec<Value> = result
        .get("actions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|a| json!({"id": a["id"], "title": a["title"], "kind": a["kind"]}))
        .collect();
    let text = if actions.is_empty() {
        "no code actions here".to_owned()
    } else {
        actions
            .iter()
            .map(|a| {
                let kind = a["kind"].as_str().unwrap_or_default();
                let kind = if kind.is_empty() {
                    String::new()
                } else {
                    format!(" ({kind})")
                };
                format!(
                    "{}: {}{kind}",
                    a["id"].as_str().unwrap_or_default(),
                    a["title"].as_str().unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    Ok((text, json!({"actions": actions})))
}

pub async fn apply_action(state: &State, project: &Project, args: ApplyArgs) -> Answer {
    let id = match args.id {
        Value::String(id) => id,
        Value::Number(n) => n.to_string(),
        other => return Err(Failure(format!("id must be a string, got {other}"))),
    };
    let query = LspEditQuery {
        kind: "apply_action",
        action_id: Some(id),
        ..Default::default()
    };
    let result = ask(state, project, query).await?;
    let changes = changes(state, project, &result).await?;
    let answer = propose(state, project, "apply_code_action", changes).await;
    match result.get("note").and_then(Value::as_str) {
        None => answer,
        Some(note) => match answer {
            Ok((text, structured)) => Ok((format!("{text}\n{note}"), structured)),
            Err(Failure(text)) => Err(Failure(format!("{text}\n{note}"))),
        },
    }
}
