//! Inline suggestions: Neovim asks, the host adds tree-sitter context, sends
//! `getSuggestions` to the connected pi agent and hands the answer back to
//! Lua — unless the person moved on, in which case the request was
//! cancelled with `request_cancelled` and its late answer is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::host::Shared;
use crate::hub::{ClientId, ClientKind};
use crate::jsonrpc;
use crate::outline::worker::{Command, Lookup};
use crate::outline::{Context, OUTLINE_BYTES};

/// One trigger from `lua/pi-ide/suggest.lua`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct SuggestRequest {
    /// Lua's sequence number: identifies the request in both directions.
    pub token: u64,
    pub buf: i64,
    /// 0-based row and byte column of the cursor.
    pub row: usize,
    pub col: usize,
    pub filetype: String,
    pub path: String,
    /// Cursor windows (~20 lines before, ~10 after) read by Lua.
    pub before: String,
    pub after: String,
    pub count: u32,
    pub model: Option<String>,
    /// From Neovim's own parser, for filetypes the host has no grammar for.
    pub outline: Option<String>,
    pub scope: Option<String>,
    pub in_comment: Option<bool>,
}

/// Requests in flight, by Lua token: `None` until sent to an agent.
#[derive(Default)]
pub struct Suggestions {
    inflight: Mutex<HashMap<u64, Option<(ClientId, String)>>>,
}

impl Suggestions {
    pub fn begin(&self, token: u64) {
        self.lock().insert(token, None);
    }

    /// Records where the request went; false when it was cancelled meanwhile.
    fn sent(&self, token: u64, client: ClientId, id: String) -> bool {
        match self.lock().get_mut(&token) {
            Some(slot) => {
                *slot = Some((client, id));
                true
            }
            None => false,
        }
    }

    /// Forgets the request; returns where to send `request_cancelled`.
    pub fn cancel(&self, token: u64) -> Option<(ClientId, String)> {
        self.lock().remove(&token).flatten()
    }

    /// True when the request is still wanted (not cancelled).
    fn finish(&self, token: u64) -> bool {
        self.lock().remove(&token).is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Option<(ClientId, String)>>> {
        crate::locking::lock(&self.inflight)
    }
}

/// Cancels a request in flight, telling its agent.
pub fn cancel(shared: &Shared, token: u64) {
    if let Some((client, id)) = shared.suggestions.cancel(token) {
        shared.hub.send(
            client,
            jsonrpc::notification("request_cancelled", json!({"id": id})),
        );
    }
}

/// Runs one request to the end and reports the outcome to Lua.
pub async fn run(shared: Arc<Shared>, request: SuggestRequest) {
    let outcome = suggest(&shared, &request).await;
    if !shared.suggestions.finish(request.token) {
        return;
    }
    let (list, error) = match outcome {
        Ok(list) => (json!(list), Value::Null),
        Err(error) => (Value::Null, json!(error)),
    };
    shared.editor.push(
        "pi-ide.suggest",
        "_on_result",
        vec![json!(request.token), list, error],
    );
}

async fn suggest(shared: &Shared, request: &SuggestRequest) -> Result<Vec<String>, String> {
    let client = shared
        .hub
        .latest(ClientKind::Pi)
        .ok_or("no pi agent is connected (run /ide in pi)")?;
    let context = tree_context(shared, request).await;
    let (id, answer) = shared.outgoing.send(
        &shared.hub,
        client,
        "getSuggestions",
        payload(request, context),
    );
    if !shared.suggestions.sent(request.token, client, id.clone()) {
        shared.hub.send(
            client,
            jsonrpc::notification("request_cancelled", json!({"id": id})),
        );
        return Err("cancelled".into());
    }
    match answer.await {
        Ok(Ok(result)) => Ok(suggestions_of(&result, request.count)),
        Ok(Err(error)) => Err(error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the agent failed")
            .to_owned()),
        Err(_) => Err("the agent disconnected".into()),
    }
}

/// Outline, scope and comment flag from the host's mirror of the buffer,
/// attaching to the buffer on its first request.
async fn tree_context(shared: &Shared, request: &SuggestRequest) -> Option<Context> {
    let ask = || {
        shared.outline.context(
            request.buf,
            request.row,
            request.col,
            &request.filetype,
            OUTLINE_BYTES,
        )
    };
    match ask().await {
        Lookup::Ready(context) => context,
        Lookup::Pending => None,
        Lookup::Attach => {
            match shared.editor.attach_buffer(request.buf).await {
                Ok((lines, tick)) => shared.outline.send(Command::Load {
                    buf: request.buf,
                    tick,
                    filetype: request.filetype.clone(),
                    lines,
                }),
                Err(error) => {
                    tracing::warn!("cannot attach buffer {}: {error}", request.buf);
                    shared.outline.send(Command::Detach { buf: request.buf });
                }
            }
            match ask().await {
                Lookup::Ready(context) => context,
                _ => None,
            }
        }
    }
}

/// The `getSuggestions` params pi understands.
pub fn payload(request: &SuggestRequest, context: Option<Context>) -> Value {
    let (outline, scope, in_comment) = match context {
        Some(context) => (
            Some(context.outline),
            Some(context.enclosing_scope),
            context.cursor_in_comment,
        ),
        None => (
            request.outline.clone(),
            request.scope.clone(),
            request.in_comment.unwrap_or(false),
        ),
    };
    let mut params = Map::new();
    params.insert("filePath".into(), json!(request.path));
    params.insert("language".into(), json!(request.filetype));
    if let Some(outline) = outline.filter(|o| !o.is_empty()) {
        params.insert("outline".into(), json!(outline));
    }
    if let Some(scope) = scope.filter(|s| !s.is_empty()) {
        params.insert("enclosingScope".into(), json!(scope));
    }
    params.insert("cursorBefore".into(), json!(request.before));
    params.insert("cursorAfter".into(), json!(request.after));
    params.insert("suggestionCount".into(), json!(request.count));
    params.insert("cursorInComment".into(), json!(in_comment));
    if let Some(model) = request.model.as_ref().filter(|m| !m.is_empty()) {
        params.insert("model".into(), json!(model));
    }
    Value::Object(params)
}

/// The strings of `{suggestions: [...]}`, non-empty, at most `count`.
fn suggestions_of(result: &Value, count: u32) -> Vec<String> {
    result
        .get("suggestions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .take(count.max(1) as usize)
        .collect()
}

/// `:PiIde model`: asks the pi agent which models it can use for suggestions.
pub async fn list_models(shared: Arc<Shared>) {
    let outcome = match shared.hub.latest(ClientKind::Pi) {
        None => Err(json!("no pi agent is connected (run /ide in pi)")),
        Some(client) => match shared
            .outgoing
            .send(&shared.hub, client, "listSuggestionModels", json!({}))
            .1
            .await
        {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(error
                .get("message")
                .cloned()
                .unwrap_or_else(|| json!("the agent failed"))),
            Err(_) => Err(json!("the agent disconnected")),
        },
    };
    let (result, error) = match outcome {
        Ok(result) => (result, Value::Null),
        Err(error) => (Value::Null, error),
    };
    shared
        .editor
        .push("pi-ide.models", "_on_models", vec![result, error]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> SuggestRequest {
        SuggestRequest {
            token: 1,
            buf: 1,
            row: 0,
            col: 3,
            filetype: "lua".into(),
            path: "/w/a.lua".into(),
            before: "loc".into(),
            after: "\nreturn M".into(),
            count: 3,
            model: None,
            outline: Some("1: function M.x()".into()),
            scope: None,
            in_comment: None,
        }
    }

    #[test]
    fn payload_prefers_the_host_tree_and_omits_what_is_empty() {
        let from_lua = payload(&request(), None);
        assert_eq!(from_lua["outline"], "1: function M.x()");
        assert!(from_lua.get("enclosingScope").is_none());
        assert!(from_lua.get("model").is_none());
        assert_eq!(from_lua["cursorBefore"], "loc");
        assert_eq!(from_lua["suggestionCount"], 3);
        assert_eq!(from_lua["cursorInComment"], false);
        let context = Context {
            outline: "1: fn a()".into(),
            enclosing_scope: "1: fn a()".into(),
            cursor_in_comment: true,
        };
        let mut with_model = request();
        with_model.model = Some("openai/gpt-4o".into());
        let from_tree = payload(&with_model, Some(context));
        assert_eq!(from_tree["outline"], "1: fn a()");
        assert_eq!(from_tree["enclosingScope"], "1: fn a()");
        assert_eq!(from_tree["cursorInComment"], true);
        assert_eq!(from_tree["model"], "openai/gpt-4o");
    }

    #[test]
    fn suggestions_are_strings_capped_at_the_count() {
        let result = json!({"suggestions": ["a", 3, "", "b", "c", "d"]});
        assert_eq!(suggestions_of(&result, 3), ["a", "b", "c"]);
        assert!(suggestions_of(&json!({"nope": 1}), 3).is_empty());
    }

    #[test]
    fn a_cancelled_request_is_not_wanted_any_more() {
        let suggestions = Suggestions::default();
        suggestions.begin(1);
        assert!(suggestions.sent(1, ClientId(1), "id-1".into()));
        assert_eq!(suggestions.cancel(1), Some((ClientId(1), "id-1".into())));
        assert!(!suggestions.finish(1));
        suggestions.begin(2);
        assert_eq!(suggestions.cancel(2), None, "cancelled before it was sent");
        assert!(!suggestions.sent(2, ClientId(1), "id-2".into()));
        suggestions.begin(3);
        assert!(suggestions.finish(3));
    }
}
