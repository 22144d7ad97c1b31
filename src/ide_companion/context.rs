//! `ide/contextUpdate`: the files the person worked in lately (at most ten,
//! newest first), the current one marked active with its cursor (1-based
//! line and UTF-16 character) and its selected text (cut at 16 KiB).
//! Computed from the debounced selection events Lua already sends; each
//! client's queue keeps only the newest one.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::client::ClientId;
use crate::jsonrpc;
use crate::nvim::seam::LuaCall;
use crate::selection::{Mode, Positions};
use crate::state::State;
use crate::state::outbox::Latest;
use crate::state::recent::Recent;

/// Most bytes of selected text sent (Gemini CLI cuts there too).
pub const MAX_SELECTED_BYTES: usize = 16 * 1024;

/// Where the person is in the active file.
#[derive(Debug, Clone, PartialEq)]
pub struct Active {
    pub line: u32,
    pub character: u32,
    /// `None` for a bare cursor.
    pub selected: Option<String>,
}

/// The notification's params for `files` (newest first; the first one is
/// the active file when `active` is known).
pub fn params(files: &[Recent], active: Option<&Active>) -> Value {
    let open: Vec<Value> = files
        .iter()
        .enumerate()
        .map(|(at, file)| {
            let mut entry = json!({"path": file.path, "timestamp": file.timestamp});
            if at == 0
                && let Some(active) = active
            {
                entry["isActive"] = json!(true);
                entry["cursor"] = json!({"line": active.line, "character": active.character});
                if let Some(text) = &active.selected {
                    entry["selectedText"] = json!(cut(text, MAX_SELECTED_BYTES));
                }
            }
            entry
        })
        .collect();
    json!({"workspaceState": {"openFiles": open, "isTrusted": true}})
}

/// `text` cut to at most `max` bytes, on a character boundary.
pub fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The rows of the selection at `positions` that hold its first
/// `text_bytes` (what Neovim reads is bounded by bytes, whatever the
/// lines' lengths); `None` when they cannot be read. The Codex context
/// reads the same: one read serves both.
pub async fn selected_rows(
    state: &State,
    positions: &Positions,
    text_bytes: usize,
) -> Option<Vec<String>> {
    let (first, last) = positions.rows();
    let call = LuaCall::SelectedRows {
        buf: positions.buf,
        first,
        last,
        max_bytes: positions.bytes_to_read(text_bytes),
    };
    match state.editor().query::<Vec<String>>(call).await {
        Ok(rows) => Some(rows.unwrap_or_default()),
        Err(error) => {
            tracing::warn!("cannot read the selected lines: {error}");
            None
        }
    }
}

/// The active file's position and selection from the selected `rows`.
fn active(positions: &Positions, rows: &[String]) -> Active {
    let selection = positions.to_params(rows);
    let end = &selection["selection"]["end"];
    let number = |value: &Value| value.as_u64().unwrap_or(0) as u32 + 1;
    let selected = (positions.mode != Mode::Cursor)
        .then(|| selection["text"].as_str().unwrap_or_default().to_owned());
    Active {
        line: number(&end["line"]),
        character: number(&end["character"]),
        selected,
    }
}

/// The whole notification with the person's place, when known.
fn message(state: &State, active: Option<&Active>) -> String {
    let files = state.recent().list();
    jsonrpc::notification("ide/contextUpdate", params(&files, active))
}

/// Whether a selection's rows are wanted here, and how many bytes of its
/// text.
pub fn wants_rows(state: &State) -> Option<usize> {
    state
        .clients()
        .any_companion()
        .then_some(MAX_SELECTED_BYTES)
}

/// The person moved to `positions`, whose selected `rows` were read when
/// [`wants_rows`] asked for them: every companion client gets the new
/// context.
pub fn on_selection(state: &State, positions: &Positions, rows: Option<&[String]>) {
    state.recent().touch(&positions.path);
    if !state.clients().any_companion() {
        return;
    }
    let active = rows.map(|rows| active(positions, rows));
    let message = message(state, active.as_ref());
    state
        .clients()
        .broadcast_companion(Latest::Context, &message);
}

/// The context right after a client initialized.
pub async fn send_current(state: &Arc<State>, client: ClientId) {
    let positions = match state.editor().query::<Positions>(LuaCall::Positions).await {
        Ok(positions) => positions,
        Err(error) => {
            tracing::warn!("cannot read the current position: {error}");
            None
        }
    };
    let mut active_now = None;
    if let Some(positions) = &positions {
        state.recent().touch(&positions.path);
        if let Some(rows) = selected_rows(state, positions, MAX_SELECTED_BYTES).await {
            active_now = Some(active(positions, &rows));
        }
    }
    let message = message(state, active_now.as_ref());
    state
        .clients()
        .send_latest(client, Latest::Context, message);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recent(path: &str, timestamp: u64) -> Recent {
        Recent {
            path: path.into(),
            timestamp,
        }
    }

    #[test]
    fn one_active_file_with_cursor_and_selection_the_others_bare() {
        let files = [recent("/w/a.rs", 20), recent("/w/b.rs", 10)];
        let active = Active {
            line: 3,
            character: 5,
            selected: Some("fn x".into()),
        };
        let got = params(&files, Some(&active));
        let open = &got["workspaceState"]["openFiles"];
        assert_eq!(
            open[0],
            json!({"path": "/w/a.rs", "timestamp": 20, "isActive": true,
                   "cursor": {"line": 3, "character": 5}, "selectedText": "fn x"})
        );
        assert_eq!(open[1], json!({"path": "/w/b.rs", "timestamp": 10}));
        assert_eq!(got["workspaceState"]["isTrusted"], true);
        let cursor_only = Active {
            selected: None,
            ..active
        };
        assert!(
            params(&files, Some(&cursor_only))["workspaceState"]["openFiles"][0]
                .get("selectedText")
                .is_none()
        );
    }

    #[test]
    fn selected_text_is_cut_at_16_kib_on_a_character_boundary() {
        let long = format!("{}é", "x".repeat(MAX_SELECTED_BYTES - 1));
        assert_eq!(cut(&long, MAX_SELECTED_BYTES).len(), MAX_SELECTED_BYTES - 1);
        let fits = "y".repeat(MAX_SELECTED_BYTES);
        assert_eq!(cut(&fits, MAX_SELECTED_BYTES), fits);
    }
}
