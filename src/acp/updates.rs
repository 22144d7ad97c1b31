//! What a chat tells Lua, batched: the agent's `session/update`s turned
//! into what the transcript draws, and the chat's own news (status,
//! notices, its end). Lua gets at most one `chat_update` call a frame and
//! never a second one while the first runs; consecutive message chunks of
//! one kind travel as one string, so an agent that floods tiny chunks
//! costs Neovim one call per frame, however many it sends.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value as Json, json};
use tokio::sync::Notify;

use crate::nvim::editor::Editor;
use crate::nvim::seam::LuaCall;

/// At most one call into Lua per frame (a 60 Hz screen).
pub const FRAME: Duration = Duration::from_millis(16);
/// Updates other than text waiting for Lua before an agent's next update
/// waits for room (text chunks are merged and take no more places).
pub const MAX_WAITING: usize = 4096;

/// A chat's updates on their way to Lua.
pub struct Outbox {
    chat: u64,
    waiting: Mutex<Waiting>,
    /// Wakes the sender when something waits.
    wake: Notify,
    /// Wakes writers waiting for room.
    room: Notify,
}

#[derive(Default)]
struct Waiting {
    updates: Vec<Json>,
    /// The chat ended: the sender stops once this is sent.
    ended: bool,
}

impl Outbox {
    pub fn new(chat: u64) -> Outbox {
        Outbox {
            chat,
            waiting: Mutex::default(),
            wake: Notify::new(),
            room: Notify::new(),
        }
    }

    /// Queues `update`, merging a text chunk into the one before it.
    pub fn push(&self, update: Json) {
        let mut waiting = crate::mutex::lock(&self.waiting);
        if waiting.ended {
            return;
        }
        if update["kind"] == "ended" {
            waiting.ended = true;
        }
        merge(&mut waiting.updates, update);
        drop(waiting);
        self.wake.notify_one();
    }

    /// [`Self::push`], after waiting while Lua is [`MAX_WAITING`] updates behind.
    pub async fn push_in_turn(&self, update: Json) {
        loop {
            let room = self.room.notified();
            if crate::mutex::lock(&self.waiting).updates.len() < MAX_WAITING {
                break;
            }
            room.await;
        }
        self.push(update);
    }

    /// A line for the person in the transcript.
    pub fn notice(&self, level: &str, text: impl Into<String>) {
        self.push(json!({"kind": "notice", "level": level, "text": text.into()}));
    }

    pub fn status(&self, status: &str, detail: Option<&str>) {
        self.push(json!({"kind": "status", "status": status, "detail": detail}));
    }

    /// Sends what waits, one call a frame, until the chat's end is sent.
    pub async fn send_to(&self, editor: Editor) {
        loop {
            let wake = self.wake.notified();
            let (updates, ended) = {
                let mut waiting = crate::mutex::lock(&self.waiting);
                (std::mem::take(&mut waiting.updates), waiting.ended)
            };
            self.room.notify_waiters();
            if updates.is_empty() {
                if ended {
                    return;
                }
                wake.await;
                continue;
            }
            let call = LuaCall::ChatUpdate {
                chat: self.chat,
                updates,
            };
            if let Err(error) = editor.call(call).await {
                tracing::warn!("chat {}: Lua could not draw an update: {error}", self.chat);
            }
            let last = crate::mutex::lock(&self.waiting).updates.is_empty();
            if ended && last {
                return;
            }
            tokio::time::sleep(FRAME).await;
        }
    }
}

/// Appends `update`, or adds its text to the chunk before it of its kind.
fn merge(updates: &mut Vec<Json>, update: Json) {
    if let Some(kind) = update["kind"].as_str()
        && matches!(kind, "text" | "thought" | "user")
        && let Some(last) = updates.last_mut()
        && last["kind"] == kind
        && let (Json::String(before), Some(more)) = (&mut last["text"], update["text"].as_str())
    {
        // In place: a flood of tiny chunks must not copy the text each time.
        before.push_str(more);
        return;
    }
    updates.push(update);
}

/// A `session/update`'s `update` as the transcript draws it; `None` for
/// kinds it does not show.
pub fn from_session_update(update: &Json) -> Option<Json> {
    let kind = update["sessionUpdate"].as_str()?;
    Some(match kind {
        "agent_message_chunk" => json!({"kind": "text", "text": content_text(&update["content"])}),
        "agent_thought_chunk" => {
            json!({"kind": "thought", "text": content_text(&update["content"])})
        }
        "user_message_chunk" => json!({"kind": "user", "text": content_text(&update["content"])}),
        "tool_call" => tool(update, "tool"),
        "tool_call_update" => tool(update, "tool_update"),
        "plan" => {
            let entries: Vec<Json> = items(&update["entries"])
                .map(|entry| json!({"content": entry["content"], "status": entry["status"]}))
                .collect();
            json!({"kind": "plan", "entries": entries})
        }
        "available_commands_update" => {
            let commands: Vec<Json> = items(&update["availableCommands"])
                .map(|command| {
                    json!({
                        "name": command["name"],
                        "description": command["description"],
                        "hint": command["input"]["hint"],
                    })
                })
                .collect();
            json!({"kind": "commands", "commands": commands})
        }
        "current_mode_update" => json!({"kind": "mode", "mode": update["currentModeId"]}),
        "config_option_update" => json!({"kind": "config", "options": update["configOptions"]}),
        "session_info_update" => json!({"kind": "title", "title": update["title"]}),
        _ => return None,
    })
}

fn items(list: &Json) -> impl Iterator<Item = &Json> {
    list.as_array().into_iter().flatten()
}

/// A content block as transcript text: text as it is, the rest named.
pub fn content_text(content: &Json) -> String {
    match content["type"].as_str() {
        Some("text") => content["text"].as_str().unwrap_or_default().to_owned(),
        Some("resource_link") => format!(
            "[{}]({})",
            content["name"].as_str().unwrap_or("file"),
            content["uri"].as_str().unwrap_or_default()
        ),
        Some("resource") => match content["resource"]["text"].as_str() {
            Some(text) => text.to_owned(),
            None => format!(
                "[{}]",
                content["resource"]["uri"].as_str().unwrap_or("resource")
            ),
        },
        Some(other) => format!("[{other}]"),
        None => String::new(),
    }
}

/// A tool call (or an update of one): its row and where it points.
fn tool(update: &Json, kind: &str) -> Json {
    let mut row = json!({"kind": kind, "id": update["toolCallId"]});
    for (from, to) in [
        ("title", "title"),
        ("kind", "tool_kind"),
        ("status", "status"),
    ] {
        if !update[from].is_null() {
            row[to] = update[from].clone();
        }
    }
    if update["locations"].is_array() {
        let locations: Vec<Json> = items(&update["locations"])
            .map(|at| json!({"path": at["path"], "line": at["line"]}))
            .collect();
        row["locations"] = Json::Array(locations);
    }
    if update["content"].is_array() {
        let mut text = vec![];
        let mut diffs = vec![];
        let mut terminals = vec![];
        for content in items(&update["content"]) {
            match content["type"].as_str() {
                Some("diff") => diffs.push(content["path"].clone()),
                Some("terminal") => terminals.push(content["terminalId"].clone()),
                Some("content") => text.push(content_text(&content["content"])),
                _ => {}
            }
        }
        row["text"] = json!(text.join("\n"));
        row["diffs"] = Json::Array(diffs);
        row["terminals"] = Json::Array(terminals);
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_of_one_kind_travel_as_one_string() {
        let mut updates = vec![];
        for text in ["a", "b"] {
            merge(&mut updates, json!({"kind": "text", "text": text}));
        }
        merge(&mut updates, json!({"kind": "thought", "text": "t"}));
        merge(&mut updates, json!({"kind": "text", "text": "c"}));
        assert_eq!(
            updates,
            [
                json!({"kind": "text", "text": "ab"}),
                json!({"kind": "thought", "text": "t"}),
                json!({"kind": "text", "text": "c"}),
            ]
        );
    }

    #[test]
    fn session_updates_become_rows() {
        let chunk = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}});
        assert_eq!(
            from_session_update(&chunk).unwrap(),
            json!({"kind": "text", "text": "hi"})
        );
        let call = json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit a.rs",
            "kind": "edit", "status": "pending",
            "locations": [{"path": "/w/a.rs", "line": 3}],
            "content": [{"type": "diff", "path": "/w/a.rs", "oldText": "a", "newText": "b"}]});
        let row = from_session_update(&call).unwrap();
        assert_eq!(row["kind"], "tool");
        assert_eq!(row["tool_kind"], "edit");
        assert_eq!(row["locations"], json!([{"path": "/w/a.rs", "line": 3}]));
        assert_eq!(row["diffs"], json!(["/w/a.rs"]));
        let status =
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"});
        let row = from_session_update(&status).unwrap();
        assert_eq!(
            row,
            json!({"kind": "tool_update", "id": "t1", "status": "completed"})
        );
        let plan = json!({"sessionUpdate": "plan", "entries": [{"content": "x", "priority": "high", "status": "pending"}]});
        assert_eq!(
            from_session_update(&plan).unwrap()["entries"],
            json!([{"content": "x", "status": "pending"}])
        );
        assert!(from_session_update(&json!({"sessionUpdate": "something_new"})).is_none());
    }
}
