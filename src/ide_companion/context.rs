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
/// Most rows read for a selection: each is at least one byte of text with
/// its newline, so these always hold the first [`MAX_SELECTED_BYTES`].
const MAX_SELECTED_ROWS: u32 = MAX_SELECTED_BYTES as u32;

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

/// The active file's position and selection, the selected rows read from
/// Neovim (bounded).
async fn active(state: &State, positions: &Positions) -> Option<Active> {
    let (first, last) = positions.rows();
    let last = last.min(first + MAX_SELECTED_ROWS);
    let lines = match state.editor().lines(positions.buf, first, last).await {
        Ok(lines) => lines,
        Err(error) => {
            tracing::warn!("cannot read selected lines: {error}");
            return None;
        }
    };
    let selection = positions.to_params(&lines);
    let end = &selection["selection"]["end"];
    let number = |value: &Value| value.as_u64().unwrap_or(0) as u32 + 1;
    let selected = (positions.mode != Mode::Cursor)
        .then(|| selection["text"].as_str().unwrap_or_default().to_owned());
    Some(Active {
        line: number(&end["line"]),
        character: number(&end["character"]),
        selected,
    })
}

/// The whole notification for the person's place `positions`.
async fn message(state: &State, positions: Option<&Positions>) -> String {
    let active = match positions {
        Some(positions) => active(state, positions).await,
        None => None,
    };
    let files = state.recent().list();
    jsonrpc::notification("ide/contextUpdate", params(&files, active.as_ref()))
}

/// The person moved: every companion client gets the new context.
pub async fn on_selection(state: &State, positions: &Positions) {
    state.recent().touch(&positions.path);
    if !state.clients().any_companion() {
        return;
    }
    let message = message(state, Some(positions)).await;
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
    if let Some(positions) = &positions {
        state.recent().touch(&positions.path);
    }
    let message = message(state, positions.as_ref()).await;
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
