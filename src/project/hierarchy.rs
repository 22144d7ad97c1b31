//! Call and type hierarchies from Neovim's language servers, walked here:
//! the item at a position is prepared, then each level asked of the server
//! that named the items, breadth first, to a bounded depth and count, each
//! item once. Nodes come out 1-based, UTF-16, relative to the project, with
//! their line's text.

use std::collections::HashSet;

use futures_util::{StreamExt, stream};
use serde::Deserialize;
use serde_json::{Value, json};

use super::lsp::{TIMEOUT, send};
use super::lsp_answers::{Encoding, Position, utf16_column};
use super::{Answer, Failure, Project, line_text};
use crate::nvim::seam::LspQuery;
use crate::state::State;
use crate::uri::path_of;

/// Deepest level asked for, and the default.
pub const MAX_DEPTH: u64 = 3;
/// Items in one answer, the prepared ones included.
pub const MAX_ITEMS: usize = 100;
/// Items asked about at once.
const AT_ONCE: usize = 4;

/// Which hierarchy, and which way.
#[derive(Clone, Copy)]
pub struct Walk {
    /// `call_hierarchy` or `type_hierarchy`.
    pub prepare: &'static str,
    /// `incoming_calls`, `outgoing_calls`, `supertypes` or `subtypes`.
    pub step: &'static str,
}

/// An item a server named, and who to ask about it.
struct Item {
    raw: Value,
    client_id: u64,
    encoding: Encoding,
    at: Position,
    /// Index of its parent in the list; `None` for a prepared one.
    parent: Option<usize>,
}

impl Item {
    fn new(raw: Value, client_id: u64, encoding: Encoding, parent: Option<usize>) -> Option<Item> {
        let uri = raw.get("uri")?.as_str()?;
        let range = raw.get("selectionRange").or_else(|| raw.get("range"))?;
        let start = range.get("start")?;
        let at = Position {
            path: path_of(uri),
            line: start.get("line")?.as_u64()?,
            character: start.get("character")?.as_u64()?,
            encoding,
        };
        Some(Item {
            raw,
            client_id,
            encoding,
            at,
            parent,
        })
    }

    fn key(&self) -> (String, u64, u64, String) {
        let name = self.raw["name"].as_str().unwrap_or_default().to_owned();
        (self.at.path.clone(), self.at.line, self.at.character, name)
    }
}

/// Each `{result, encoding, client_id}` of an answer, its items.
fn responses(result: &Value) -> Vec<(u64, Encoding, Vec<Value>)> {
    result["responses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let encoding = Encoding::parse(r["encoding"].as_str());
            let client = r["client_id"].as_u64().unwrap_or(0);
            let items = r["result"].as_array().cloned().unwrap_or_default();
            (client, encoding, items)
        })
        .collect()
}

async fn ask(state: &State, query: LspQuery) -> Result<Value, Failure> {
    let answer = send(state, query).await?;
    if answer.no_server {
        return Err(Failure(
            "no language server is attached to this file".into(),
        ));
    }
    match (answer.error, answer.result) {
        (Some(error), _) => Err(Failure(error)),
        (None, result) => Ok(result.unwrap_or(Value::Null)),
    }
}

/// The arguments of both hierarchy tools.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HierarchyArgs {
    pub file_path: String,
    line: u64,
    column: u64,
    direction: String,
    #[serde(default = "one")]
    depth: u64,
}

fn one() -> u64 {
    1
}

/// Their schema; `direction` names the two ways to walk.
pub fn schema(direction: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "filePath": {"type": "string", "description": "Path relative to the project root"},
            "line": {"type": "integer", "minimum": 1, "description": "1-based line"},
            "column": {"type": "integer", "minimum": 1, "description": "1-based column, in UTF-16 code units"},
            "direction": direction,
            "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "description": "Levels below the symbol (default 1, at most 3)"},
        },
        "required": ["filePath", "line", "column", "direction"],
    })
}

/// Walks `prepare`'s hierarchy from the call's position, the step its
/// `direction` names in `steps` (`[(direction, step); 2]`).
pub async fn walk_from(
    state: &State,
    project: &Project,
    prepare: &'static str,
    steps: [(&str, &'static str); 2],
    args: &HierarchyArgs,
) -> Answer {
    let Some(&(_, step)) = steps.iter().find(|(name, _)| *name == args.direction) else {
        return Err(Failure(format!(
            "direction must be \"{}\" or \"{}\", got \"{}\"",
            steps[0].0, steps[1].0, args.direction
        )));
    };
    let path = project.resolve(&args.file_path)?;
    walk(
        state,
        project,
        Walk { prepare, step },
        path,
        args.line.max(1) - 1,
        args.column.max(1) - 1,
        args.depth,
    )
    .await
}

/// The hierarchy at 0-based `line`/`character` (UTF-16) of `path`, `depth`
/// levels deep; the answer's text and `{items: [node with children]}`.
pub async fn walk(
    state: &State,
    project: &Project,
    walk: Walk,
    path: String,
    line: u64,
    character: u64,
    depth: u64,
) -> Answer {
    let depth = depth.clamp(1, MAX_DEPTH);
    let prepared = ask(
        state,
        LspQuery {
            kind: walk.prepare,
            path,
            line,
            character,
            timeout_ms: TIMEOUT.as_millis() as u64,
            ..Default::default()
        },
    )
    .await?;
    let mut items: Vec<Item> = vec![];
    let mut seen = HashSet::new();
    for (client, encoding, found) in responses(&prepared) {
        for raw in found {
            if let Some(item) = Item::new(raw, client, encoding, None)
                && seen.insert(item.key())
            {
                items.push(item);
            }
        }
    }
    if items.is_empty() {
        return Err(Failure(
            "the language server names no symbol at that position for a hierarchy".into(),
        ));
    }
    let mut cut = false;
    let mut level: Vec<usize> = (0..items.len()).collect();
    for _ in 0..depth {
        let asked: Vec<(usize, Result<Value, Failure>)> = stream::iter(level.iter().copied())
            .map(|index| {
                let item = &items[index];
                let query = LspQuery {
                    kind: walk.step,
                    path: item.at.path.clone(),
                    item: Some(item.raw.clone()),
                    client_id: Some(item.client_id),
                    timeout_ms: TIMEOUT.as_millis() as u64,
                    ..Default::default()
                };
                async move { (index, ask(state, query).await) }
            })
            .buffer_unordered(AT_ONCE)
            .collect()
            .await;
        let mut next = vec![];
        let mut asked = asked;
        asked.sort_by_key(|(index, _)| *index);
        for (parent, answer) in asked {
            let answer = match answer {
                Ok(answer) => answer,
                // The first level's failure is the answer; deeper ones cut.
                Err(failure) if items[parent].parent.is_none() => {
                    return Err(failure);
                }
                Err(_) => continue,
            };
            let (client, encoding) = (items[parent].client_id, items[parent].encoding);
            for (_, _, found) in responses(&answer) {
                for entry in found {
                    // Calls wrap their item in `from` / `to`.
                    let raw = match entry.get("from").or_else(|| entry.get("to")) {
                        Some(inner) => inner.clone(),
                        None => entry,
                    };
                    let Some(item) = Item::new(raw, client, encoding, Some(parent)) else {
                        continue;
                    };
                    if !seen.insert(item.key()) {
                        continue;
                    }
                    if items.len() == MAX_ITEMS {
                        cut = true;
                        break;
                    }
                    next.push(items.len());
                    items.push(item);
                }
            }
        }
        if next.is_empty() || cut {
            break;
        }
        level = next;
    }
    let wanted = line_text::rows(items.iter().map(|i| (i.at.path.as_str(), i.at.line)));
    let texts = line_text::read(state, wanted).await?;
    let nodes: Vec<Value> = items
        .iter()
        .map(|item| {
            let text = texts.get(&item.at.path, item.at.line);
            let column = utf16_column(text, item.at.character, item.at.encoding);
            let mut node = json!({
                "name": item.raw["name"],
                "kind": super::lsp_answers::kind(&item.raw),
                "filePath": project.relative(&item.at.path),
                "line": item.at.line + 1,
                "column": column + 1,
                "lineText": text,
                "children": [],
            });
            if let Some(detail) = item.raw.get("detail").and_then(Value::as_str) {
                node["detail"] = json!(detail);
            }
            node
        })
        .collect();
    Ok(tree(&items, nodes, cut))
}

/// The nodes as a tree (children under their parents) and as indented text.
fn tree(items: &[Item], mut nodes: Vec<Value>, cut: bool) -> (String, Value) {
    let mut lines = vec![];
    fn describe(node: &Value, depth: usize, lines: &mut Vec<String>) {
        lines.push(format!(
            "{}{} {} {}:{}:{}",
            "  ".repeat(depth),
            node["kind"].as_str().unwrap_or_default(),
            node["name"].as_str().unwrap_or_default(),
            node["filePath"].as_str().unwrap_or_default(),
            node["line"],
            node["column"]
        ));
        for child in node["children"].as_array().into_iter().flatten() {
            describe(child, depth + 1, lines);
        }
    }
    // Children come after their parents: fold from the end.
    for index in (0..items.len()).rev() {
        if let Some(parent) = items[index].parent {
            let node = std::mem::take(&mut nodes[index]);
            if let Some(children) = nodes[parent]["children"].as_array_mut() {
                children.insert(0, node);
            }
        }
    }
    let roots: Vec<Value> = nodes
        .into_iter()
        .zip(items)
        .filter(|(_, item)| item.parent.is_none())
        .map(|(node, _)| node)
        .collect();
    for root in &roots {
        describe(root, 0, &mut lines);
    }
    if cut {
        lines.push(format!("(cut at {MAX_ITEMS} items)"));
    }
    (
        lines.join("\n"),
        json!({"items": roots, "limitReached": cut}),
    )
}
