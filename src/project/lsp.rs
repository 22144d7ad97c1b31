//! `get_symbol_info`, `find_definition`, `find_references {filePath, line,
//! column}` and `get_document_symbols {filePath}`, answered by Neovim's
//! language servers: Lua makes the request without blocking Neovim and
//! answers with 0-based positions (UTF-16 columns), made 1-based here.
//! Without a language server, document symbols come from the host's
//! tree-sitter outline.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Answer, Failure, Project, ProjectTool, arguments};
use crate::nvim::seam::{BufferText, LspAnswer, LspQuery, LuaCall};
use crate::outline::definitions::entries;
use crate::outline::document::Document;
use crate::state::State;

/// Bound of one LSP tool call in Neovim, waiting for a server included.
pub(super) const TIMEOUT: Duration = Duration::from_secs(10);

fn position_properties() -> Value {
    json!({
        "filePath": {"type": "string", "description": "Path relative to the project root"},
        "line": {"type": "integer", "minimum": 1, "description": "1-based line"},
        "column": {"type": "integer", "minimum": 1, "description": "1-based column, in UTF-16 code units"},
    })
}

pub const SYMBOL_INFO: ProjectTool = ProjectTool {
    name: "get_symbol_info",
    description: "What the language server says about the symbol at a 1-based line and column: signature and documentation (hover), as markdown.",
    properties: position_properties,
    required: &["filePath", "line", "column"],
};

pub const DEFINITION: ProjectTool = ProjectTool {
    name: "find_definition",
    description: "Where the symbol at a 1-based line and column is defined, from the language server: locations {filePath, line, column, lineText}, 1-based.",
    properties: position_properties,
    required: &["filePath", "line", "column"],
};

pub const REFERENCES: ProjectTool = ProjectTool {
    name: "find_references",
    description: "Every reference to the symbol at a 1-based line and column (its declaration included), from the language server: locations {filePath, line, column, lineText}, 1-based.",
    properties: position_properties,
    required: &["filePath", "line", "column"],
};

pub const DOCUMENT_SYMBOLS: ProjectTool = ProjectTool {
    name: "get_document_symbols",
    description: "The symbols of a file {name, kind, filePath, line, column} (1-based), from the language server, else from the host's tree-sitter outline.",
    properties: || json!({"filePath": {"type": "string", "description": "Path relative to the project root"}}),
    required: &["filePath"],
};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PositionArgs {
    file_path: String,
    line: u64,
    column: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileArgs {
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
    };
    send(state, query).await
}

/// Hands `query` to Lua under a fresh id and waits, a little longer than its
/// own bound, for the answer.
pub(super) async fn send(state: &State, mut query: LspQuery) -> Result<LspAnswer, Failure> {
    let (id, answer) = state.lsp.open();
    query.id = id;
    let bound = Duration::from_millis(query.timeout_ms);
    if let Err(e) = state.editor.call(LuaCall::LspRequest(query)).await {
        state.lsp.forget(id);
        return Err(Failure(format!(
            "Neovim could not ask its language servers: {e}"
        )));
    }
    match tokio::time::timeout(bound + Duration::from_secs(2), answer).await {
        Ok(Ok(answer)) => Ok(answer),
        _ => {
            state.lsp.forget(id);
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

async fn at_position(
    state: &State,
    project: &Project,
    tool: &str,
    kind: &'static str,
    args: Value,
) -> Result<(String, Value), Failure> {
    let args: PositionArgs = arguments(tool, args)?;
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

pub async fn symbol_info(state: &State, project: &Project, args: Value) -> Answer {
    let (path, hover) = at_position(state, project, "get_symbol_info", "hover", args).await?;
    let markdown = hover
        .get("markdown")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let text = if markdown.is_empty() {
        "no information about this symbol".to_owned()
    } else {
        markdown.clone()
    };
    Ok((
        text,
        json!({"filePath": project.relative(&path), "documentation": markdown}),
    ))
}

pub async fn definition(state: &State, project: &Project, args: Value) -> Answer {
    let (_, found) = at_position(state, project, "find_definition", "definition", args).await?;
    Ok(locations(project, &found))
}

pub async fn references(state: &State, project: &Project, args: Value) -> Answer {
    let (_, found) = at_position(state, project, "find_references", "references", args).await?;
    Ok(locations(project, &found))
}

/// Lua's 0-based locations as 1-based ones relative to the root.
fn locations(project: &Project, found: &Value) -> (String, Value) {
    let list: Vec<Value> = found
        .get("locations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|l| {
            json!({
                "filePath": project.relative(l["path"].as_str().unwrap_or_default()),
                "line": l["line"].as_u64().unwrap_or(0) + 1,
                "column": l["character"].as_u64().unwrap_or(0) + 1,
                "lineText": l["text"].as_str().unwrap_or_default(),
            })
        })
        .collect();
    let text = if list.is_empty() {
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
    (text, json!({"locations": list}))
}

pub async fn document_symbols(state: &State, project: &Project, args: Value) -> Answer {
    let args: FileArgs = arguments("get_document_symbols", args)?;
    let path = project.resolve(&args.file_path)?;
    let relative = project.relative(&path);
    let answer = ask(state, "symbols", &path, 0, 0).await?;
    let symbols: Vec<Value> = if answer.no_server {
        let filetype = answer.filetype.clone().unwrap_or_default();
        outline_symbols(state, &path, &relative, &filetype)
            .await
            .ok_or_else(|| Failure(format!("no language server for {relative}")))?
    } else {
        result(answer, project, &path)?
            .get("symbols")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|s| {
                json!({
                    "name": s["name"],
                    "kind": s["kind"],
                    "filePath": relative,
                    "line": s["line"].as_u64().unwrap_or(0) + 1,
                    "column": s["character"].as_u64().unwrap_or(0) + 1,
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
        .editor
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
