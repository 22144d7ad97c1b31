//! `ide-context {workspaceRoot}`: what Codex puts before each prompt when
//! `/ide` is on (its "Context from my IDE setup"): the active file with its
//! selection (0-based lines, UTF-16 characters) and selected text, and the
//! files worked in lately as `openTabs`. Answered from what the host keeps
//! ([`crate::state::place`], [`crate::state::recent`]): a prompt costs
//! Neovim nothing.
//!
//! Only a workspace inside this Neovim's project (never `/` or the home
//! directory) is answered (else `no-client-found`, which Codex shows as "no
//! editor has this project open"), and only files inside the project are
//! named, paths relative to the workspace as Codex's model sees them.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::messages::NO_CLIENT;
use crate::confine::ProjectRoot;
use crate::ide_companion::context::{cut, selected_rows};
use crate::nvim::seam::LuaCall;
use crate::selection::{Mode, Positions};
use crate::state::State;
use crate::state::place::{At, Place};

/// Most bytes of selected text kept (Codex cuts its prompt at 200,000
/// characters).
pub const MAX_SELECTED_BYTES: usize = 64 * 1024;
/// Most files in `openTabs`.
const MAX_TABS: usize = 10;
/// How long the first client waits for the place to be read.
const FIRST_READ: Duration = Duration::from_secs(2);

/// Whether the place is kept: the socket is served and a client came.
fn keeps(state: &State) -> bool {
    state.keeps_place() && state.place().wanted()
}

/// Whether a selection's rows are wanted here, and how many bytes of its
/// text: not before a client came, nor for a bare cursor.
pub fn wants_rows(state: &State, positions: &Positions) -> Option<usize> {
    (keeps(state) && positions.mode != Mode::Cursor).then_some(MAX_SELECTED_BYTES)
}

/// A client connected: the first one starts the keeping, with the place
/// as it is now (read once, waited for a little so its first question
/// has an answer).
pub async fn client_came(state: &State) {
    if !state.keeps_place() || !state.place().want() {
        return;
    }
    let read = async {
        let positions = state.editor().query::<Positions>(LuaCall::Positions).await;
        let Ok(Some(positions)) = positions else {
            return;
        };
        state.recent().touch(&positions.path);
        let rows = match wants_rows(state, &positions) {
            Some(bytes) => selected_rows(state, &positions, bytes).await,
            None => None,
        };
        on_selection(state, &positions, rows.as_deref());
    };
    if tokio::time::timeout(FIRST_READ, read).await.is_err() {
        tracing::debug!("Codex socket: Neovim busy; the place is kept from its next move");
    }
}

/// The person moved (a debounced selection event): keep where, with the
/// selected `rows` read when [`wants_rows`] asked for them.
pub fn on_selection(state: &State, positions: &Positions, rows: Option<&[String]>) {
    if !keeps(state) {
        return;
    }
    let [row, col] = positions.start;
    if positions.mode == Mode::Cursor {
        let at = At {
            line: row,
            character: col,
        };
        state.place().set(Place {
            path: positions.path.clone(),
            start: at,
            end: at,
            selected: None,
        });
        return;
    }
    let Some(rows) = rows else {
        return;
    };
    let params = positions.to_params(rows);
    let at = |end: &str| At {
        line: params["selection"][end]["line"].as_u64().unwrap_or(0) as u32,
        character: params["selection"][end]["character"].as_u64().unwrap_or(0) as u32,
    };
    let text = params["text"].as_str().unwrap_or_default();
    state.place().set(Place {
        path: positions.path.clone(),
        start: at("start"),
        end: at("end"),
        selected: Some(cut(text, MAX_SELECTED_BYTES).to_owned()),
    });
}

/// The `ideContext` for the workspace `params` names, or Codex's error.
pub fn answer(state: &State, params: &Value) -> Result<Value, &'static str> {
    let workspace = params
        .get("workspaceRoot")
        .and_then(Value::as_str)
        .ok_or(NO_CLIENT)?;
    let root = ProjectRoot::confirm(&state.root().to_string_lossy()).map_err(|_| NO_CLIENT)?;
    let workspace = Path::new(workspace).canonicalize().map_err(|_| NO_CLIENT)?;
    if !root.holds(&workspace) {
        return Err(NO_CLIENT);
    }
    let inside = |path: &str| {
        Path::new(path)
            .canonicalize()
            .ok()
            .filter(|real| root.holds(real) && real.is_file())
    };
    let place = state.place().get();
    let active = place.as_ref().and_then(|place| {
        let real = inside(&place.path)?;
        let mut file = descriptor(&workspace, &place.path, &real);
        file["selection"] = range(place.start, place.end);
        file["activeSelectionContent"] = json!(place.selected.as_deref().unwrap_or(""));
        file["selections"] = json!([]);
        Some(file)
    });
    let tabs: Vec<Value> = state
        .recent()
        .list()
        .into_iter()
        .filter_map(|file| Some(descriptor(&workspace, &file.path, &inside(&file.path)?)))
        .take(MAX_TABS)
        .collect();
    Ok(json!({"activeFile": active, "openTabs": tabs}))
}

/// `{label, path, fsPath}` of file `path` (`real` once links are resolved).
fn descriptor(workspace: &Path, path: &str, real: &Path) -> Value {
    let label = real
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    json!({
        "label": label,
        "path": relative(workspace, real).to_string_lossy(),
        "fsPath": path,
    })
}

fn range(start: At, end: At) -> Value {
    json!({
        "start": {"line": start.line, "character": start.character},
        "end": {"line": end.line, "character": end.character},
    })
}

/// `path` relative to directory `base` (both without links), `..` where
/// it lies above it.
fn relative(base: &Path, path: &Path) -> PathBuf {
    let base: Vec<Component> = base.components().collect();
    let path: Vec<Component> = path.components().collect();
    let shared = base.iter().zip(&path).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in shared..base.len() {
        out.push("..");
    }
    for part in &path[shared..] {
        out.push(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_to_the_workspace_above_it_too() {
        let rel = |base: &str, path: &str| relative(Path::new(base), Path::new(path));
        assert_eq!(rel("/w", "/w/src/a.rs"), PathBuf::from("src/a.rs"));
        assert_eq!(rel("/w/sub", "/w/a.rs"), PathBuf::from("../a.rs"));
        assert_eq!(rel("/w/x/y", "/w/z/a"), PathBuf::from("../../z/a"));
    }
}
