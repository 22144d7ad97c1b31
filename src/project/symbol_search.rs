//! `search_symbol {q, limit?}`: the language servers' workspace symbols
//! matching `q`, the project's own first; without a server that answers
//! `workspace/symbol`, the tree-sitter outline of the open buffers.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Answer, Failure, Project, lsp, lsp_answers};
use crate::nvim::seam::{LspQuery, LuaCall, OpenEditor};
use crate::state::State;

const DEFAULT_LIMIT: usize = 50;

#[derive(Debug, Deserialize)]
pub struct Args {
    q: String,
    limit: Option<usize>,
}

pub async fn search(state: &State, project: &Project, args: Args) -> Answer {
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let query = LspQuery {
        id: 0,
        kind: "workspace_symbols",
        path: String::new(),
        line: 0,
        character: 0,
        text: Some(args.q.clone()),
        timeout_ms: lsp::TIMEOUT.as_millis() as u64,
        ..Default::default()
    };
    let answer = lsp::send(state, query).await?;
    let (mut symbols, source) = if answer.no_server {
        (outline_matches(state, project, &args.q).await?, "outline")
    } else if let Some(error) = answer.error {
        return Err(Failure(error));
    } else {
        let found = lsp_answers::workspace_symbols(&answer.result.unwrap_or_default());
        let (symbols, _) = lsp::located_symbols(state, project, found).await?;
        (symbols, "lsp")
    };
    // Relative paths are the project's; a stable sort keeps the servers'
    // ranking within each group.
    symbols.sort_by_key(|s| s["filePath"].as_str().is_some_and(|p| p.starts_with('/')));
    let limit_reached = symbols.len() > limit;
    symbols.truncate(limit);
    let mut text = if symbols.is_empty() {
        format!("no symbol matches {:?}", args.q)
    } else {
        super::lsp::symbol_lines(&symbols, true)
    };
    if limit_reached {
        text.push_str(&format!("\n(cut at the limit of {limit})"));
    }
    if source == "outline" {
        text.push_str(
            "\n(no language server that can search symbols is attached: \
             matched the tree-sitter outline of the open buffers)",
        );
    }
    Ok((
        text,
        json!({"symbols": symbols, "limitReached": limit_reached, "source": source}),
    ))
}

/// The outline definitions of the open buffers inside the project whose
/// name contains `q`, ignoring case.
async fn outline_matches(state: &State, project: &Project, q: &str) -> Result<Vec<Value>, Failure> {
    let open = state
        .editor()
        .query::<Vec<OpenEditor>>(LuaCall::OpenEditors)
        .await
        .map_err(|e| Failure(format!("Neovim could not list its buffers: {e}")))?
        .unwrap_or_default();
    let wanted = q.to_lowercase();
    let mut found = Vec::new();
    for editor in open {
        let relative = project.relative(&editor.path);
        if relative.starts_with('/') {
            continue;
        }
        let symbols = lsp::outline_symbols(state, &editor.path, &relative, &editor.filetype)
            .await
            .unwrap_or_default();
        found.extend(symbols.into_iter().filter(|s| {
            s["name"]
                .as_str()
                .is_some_and(|name| name.to_lowercase().contains(&wanted))
        }));
    }
    Ok(found)
}
