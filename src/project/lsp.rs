//! `get_symbol_info`, `find_definition`, `find_references {filePath, line,
//! column}` and `get_document_symbols {filePath}`, answered by Neovim's
//! language servers: Lua makes the request without blocking Neovim and
//! passes the servers' answers on; here their positions become 1-based
//! UTF-16 ones, with each line's text (see [`super::line_text`]). Without a
//! language server, document symbols come from the host's tree-sitter
//! outline.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::lsp_answers::{self, Position, utf16_column};
use super::{Answer, Failure, Project, line_text};
use crate::nvim::seam::{BufferText, LspAnswer, LspQuery, LuaCall};
use crate::outline::definitions::entries;
use crate::outline::document::Document;
use crate::state::State;

/// Bound of one LSP tool call in Neovim, waiting for a server included.
pub(super) const TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) fn position_properties() -> Value {
    json!({
        "filePath": {"type": "string", "description": "Path relative to the project root"},
        "line": {"type": "integer", "minimum": 1, "description": "1-based line"},
        "column": {"type": "integer", "minimum": 1, "description": "1-based column, in UTF-16 code units"},
    })
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PositionArgs {
    file_path: String,
    line: u64,
    column: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileArgs {
    file_path: String,
}

/// Asks Lua for `kind` at the 0-based position and waits for its answer.
async fn ask(
    state: &State,
    kind: &'static str,
    path: &str,
    line: u64,
    character: u64,
) -> Result<LspAnswer, Failure> {
    let query = LspQuery {
        id: 0,
        kind,
        path: path.to_owned(),
        line,
        character,
        text: None,
        timeout_ms: TIMEOUT.as_millis() as u64,
        ..Default::default()
    };
    send(state, query).await
}

/// Hands `query` to Lua under a fresh id and waits, a little longer than its
/// own bound, for the answer.
pub(super) async fn send(state: &State, mut query: LspQuery) -> Result<LspAnswer, Failure> {
    let (id, answer) = state.lsp().open();
    query.id = id;
    let bound = Duration::from_millis(query.timeout_ms);
    if let Err(e) = state.editor().call(LuaCall::LspRequest(query)).await {
        state.lsp().forget(id);
        return Err(Failure(format!(
            "Neovim could not ask its language servers: {e}"
        )));
    }
    match tokio::time::timeout(bound + Duration::from_secs(2), answer).await {
        Ok(Ok(answer)) => Ok(answer),
        _ => {
            state.lsp().forget(id);
            Err(Failure(format!(
                "no answer from Neovim's language servers within {} s",
                bound.as_secs()
            )))
        }
    }
}

/// The answer's result, or its error in the agent's terms.
fn result(answer: LspAnswer, project: &Project, path: &str) -> Result<Value, Failure> {
    if answer.no_server {
        return Err(Failure(format!(
            "no language server for {}",
            project.relative(path)
        )));
    }
    match (answer.error, answer.result) {
        (Some(error), _) => Err(Failure(error)),
        (None, Some(result)) => Ok(result),
        (None, None) => Ok(Value::Null),
    }
}

pub(crate) async fn at_position(
    state: &State,
    project: &Project,
    kind: &'static str,
    args: PositionArgs,
) -> Result<(String, Value), Failure> {
    let path = project.resolve(&args.file_path)?;
    let answer = ask(
        state,
        kind,
        &path,
        args.line.max(1) - 1,
        args.column.max(1) - 1,
    )
    .await?;
    Ok((path.clone(), result(answer, project, &path)?))
}

/// The locations language servers answer `kind` (`definition`,
/// `references`, …) with at the call's position.
pub async fn locations_at(
    state: &State,
    project: &Project,
    kind: &'static str,
    args: PositionArgs,
) -> Answer {
    let (_, found) = at_position(state, project, kind, args).await?;
    locations(state, project, &found).await
}

/// A position as the tools give it: 0-based line, UTF-16 column, both
/// from `texts`.
fn utf16(position: &Position, texts: &line_text::LineTexts) -> u64 {
    let text = texts.get(&position.path, position.line);
    utf16_column(text, position.character, position.encoding)
}

/// The servers' locations, each once, in order, as 1-based ones relative
/// to the root with their line's text.
pub(crate) async fn locations(state: &State, project: &Project, found: &Value) -> Answer {
    let mut found = lsp_answers::locations(found);
    let cut = line_text::keep_files(&mut found, |p| &p.path);
    let wanted = line_text::rows(found.iter().map(|p| (p.path.as_str(), p.line)));
    let texts = line_text::read(state, wanted).await?;
    let mut sorted: Vec<(&str, u64, u64)> = found
        .iter()
        .map(|p| (p.path.as_str(), p.line, utf16(p, &texts)))
        .collect();
    sorted.sort_unstable();
    sorted.dedup();
    let list: Vec<Value> = sorted
        .into_iter()
        .map(|(path, line, column)| {
            json!({
                "filePath": project.relative(path),
                "line": line + 1,
                "column": column + 1,
                "lineText": texts.get(path, line),
            })
        })
        .collect();
    let mut text = if list.is_empty() {
        "no locations found".to_owned()
    } else {
        list.iter()
            .map(|l| {
                format!(
                    "{}:{}:{}: {}",
                    l["filePath"].as_str().unwrap_or_default(),
                    l["line"],
                    l["column"],
                    l["lineText"].as_str().unwrap_or_default().trim()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    if cut {
        text.push_str(&format!(
            "\n(cut to the locations in the first {} files)",
            line_text::MAX_FILES
        ));
    }
    Ok((text, json!({"locations": list, "limitReached": cut})))
}

pub async fn document_symbols(state: &State, project: &Project, args: FileArgs) -> Answer {
    let path = project.resolve(&args.file_path)?;
    let relative = project.relative(&path);
    let answer = ask(state, "symbols", &path, 0, 0).await?;
    let symbols: Vec<Value> = if answer.no_server {
        let filetype = answer.filetype.clone().unwrap_or_default();
        outline_symbols(state, &path, &relative, &filetype)
            .await
            .ok_or_else(|| Failure(format!("no language server for {relative}")))?
    } else {
        let found = lsp_answers::document_symbols(&result(answer, project, &path)?, &path);
        let wanted = line_text::rows(found.iter().map(|s| (path.as_str(), s.at.line)));
        let texts = line_text::read(state, wanted).await?;
        found
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "kind": s.kind,
                    "filePath": relative,
                    "line": s.at.line + 1,
                    "column": utf16(&s.at, &texts) + 1,
                })
            })
            .collect()
    };
    let text = if symbols.is_empty() {
        "no symbols".to_owned()
    } else {
        symbol_lines(&symbols, false)
    };
    Ok((text, json!({"filePath": relative, "symbols": symbols})))
}

/// `symbols` as `{name, kind, filePath, line, column}` (1-based, UTF-16,
/// relative to the root), with the text of their lines read to convert
/// columns; true when the list was cut to [`line_text::MAX_FILES`] files.
pub(super) async fn located_symbols(
    state: &State,
    project: &Project,
    mut symbols: Vec<lsp_answers::Symbol>,
) -> Result<(Vec<Value>, bool), Failure> {
    let cut = line_text::keep_files(&mut symbols, |s| &s.at.path);
    let wanted = line_text::rows(symbols.iter().map(|s| (s.at.path.as_str(), s.at.line)));
    let texts = line_text::read(state, wanted).await?;
    let list = symbols
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "kind": s.kind,
                "filePath": project.relative(&s.at.path),
                "line": s.at.line + 1,
                "column": utf16(&s.at, &texts) + 1,
            })
        })
        .collect();
    Ok((list, cut))
}

/// One `[path:]line:column kind name` line per symbol, as JSON
/// `{name, kind, filePath, line, column}`.
pub(super) fn symbol_lines(symbols: &[Value], with_path: bool) -> String {
    symbols
        .iter()
        .map(|s| {
            let path = match with_path {
                true => format!("{}:", s["filePath"].as_str().unwrap_or_default()),
                false => String::new(),
            };
            format!(
                "{path}{}:{} {} {}",
                s["line"],
                s["column"],
                s["kind"].as_str().unwrap_or_default(),
                s["name"].as_str().unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The tree-sitter outline's definitions as symbols; `None` without a
/// grammar for `filetype`.
pub(super) async fn outline_symbols(
    state: &State,
    path: &str,
    relative: &str,
    filetype: &str,
) -> Option<Vec<Value>> {
    let lines = match state
        .editor()
        .query::<BufferText>(LuaCall::BufferText {
            path: path.to_owned(),
        })
        .await
    {
        Ok(Some(buffer)) => buffer.lines,
        _ => tokio::fs::read_to_string(path)
            .await
            .ok()?
            .lines()
            .map(str::to_owned)
            .collect(),
    };
    let mut document = Document::new(lines.clone(), 0, filetype);
    document.parse(Duration::from_secs(2));
    let (Some((tree, spec)), _) = document.parsed() else {
        return None;
    };
    let root = tree.root_node();
    let mut cursor = root.walk();
    let found: Vec<Value> = root
        .children(&mut cursor)
        .flat_map(|node| entries(node, Some(root.kind()), spec, &lines))
        .map(|entry| {
            let text = lines.get(entry.row).map(String::as_str).unwrap_or_default();
            let indent = text.len() - text.trim_start().len();
            json!({
                "name": entry.signature,
                "kind": "Definition",
                "filePath": relative,
                "line": entry.row + 1,
                "column": text[..indent].encode_utf16().count() + 1,
            })
        })
        .collect();
    Some(found)
}
