//! `session/request_permission`: the person answers in Neovim, from the
//! agent's own options. A tool call that carries a diff is shown in the
//! two-pane review first: accepting it allows the call (and the agent's
//! write of that text that follows is not reviewed twice; the person's
//! edits to the proposal are what is written), rejecting it rejects it.
//! `session/cancel` answers every waiting request `cancelled`.

use std::sync::Arc;

use serde_json::{Value as Json, json};
use tokio::sync::oneshot;

use super::{Chat, next_id};
use crate::client::Requester;
use crate::diff::pending::DiffOutcome;
use crate::nvim::seam::LuaCall;
use crate::project::Project;
use crate::project::edits::current::Current;
use crate::state::State;

/// A permission request waiting for the person.
pub struct Waiting {
    answer: oneshot::Sender<Option<String>>,
    /// Shown as a diff: its tab, closed when the request is cancelled.
    review: Option<(Arc<State>, String)>,
}

impl Waiting {
    /// `option`: one of the agent's option ids; `None`: cancelled.
    pub fn answer(self, option: Option<String>) {
        if option.is_none()
            && let Some((state, tab)) = &self.review
            && let Some(diff) = state.diffs().take_tab(Requester::Mcp, tab)
        {
            state.finish_diff(
                diff,
                DiffOutcome::rejected("the agent's turn was cancelled"),
            );
        }
        let _ = self.answer.send(option);
    }
}

/// The outcome to answer the agent: `{outcome: "selected", optionId}` or
/// `{outcome: "cancelled"}`.
pub async fn ask(state: Arc<State>, chat: Arc<Chat>, request: Json) -> Json {
    let id = next_id();
    let options = request["options"].clone();
    let tool_call = &request["toolCall"];
    let (answer, answered) = oneshot::channel();
    let diff = tool_call["content"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|content| content["type"] == "diff")
        .cloned();
    let chosen = match diff {
        Some(diff) => {
            let tab = format!("acp-{}-{id}", chat.id);
            let waiting = Waiting {
                answer,
                review: Some((state.clone(), tab.clone())),
            };
            crate::mutex::lock(&chat.permissions).insert(id, waiting);
            chat.outbox.push(json!({"kind": "permission", "id": id,
                "title": tool_call["title"], "options": options, "review": true}));
            let reviewed = review(&state, &chat, &diff, tool_call, tab).await;
            let waiting = crate::mutex::lock(&chat.permissions).remove(&id);
            match waiting {
                // Cancelled while shown: answered already.
                None => answered.await.ok().flatten(),
                Some(_) => reviewed.and_then(|allowed| pick(&options, allowed)),
            }
        }
        None => {
            crate::mutex::lock(&chat.permissions).insert(
                id,
                Waiting {
                    answer,
                    review: None,
                },
            );
            state.editor().push(LuaCall::ChatPermission(json!({
                "id": id,
                "chat": chat.id,
                "tool_call": {
                    "title": tool_call["title"],
                    "kind": tool_call["kind"],
                    "locations": tool_call["locations"],
                    "text": tool_call_text(tool_call),
                },
                "options": options,
            })));
            answered.await.ok().flatten()
        }
    };
    chat.outbox
        .push(json!({"kind": "permission_done", "id": id, "option": chosen}));
    match chosen {
        Some(option) => json!({"outcome": {"outcome": "selected", "optionId": option}}),
        None => json!({"outcome": {"outcome": "cancelled"}}),
    }
}

/// Shows the tool call's diff; `Some(true)` when accepted, `Some(false)`
/// when rejected, `None` when it could not be shown or was cancelled.
async fn review(
    state: &Arc<State>,
    chat: &Chat,
    diff: &Json,
    tool_call: &Json,
    tab: String,
) -> Option<bool> {
    let path = diff["path"].as_str()?;
    let new_text = diff["newText"].as_str()?;
    let refused = |why: String| {
        chat.outbox.notice("warn", why);
        None
    };
    let project = match Project::open(state, &json!({"projectPath": chat.cwd})).await {
        Ok(project) => project,
        Err(failure) => return refused(failure.0),
    };
    let file = match project.confine(path) {
        Ok(file) => file,
        Err(failure) => return refused(failure.0),
    };
    let before = match Current::read(state, &file).await {
        Ok(before) => before,
        Err(failure) => return refused(failure.0),
    };
    let title = format!(
        "{} asks: {}",
        chat.agent,
        tool_call["title"].as_str().unwrap_or("edit")
    );
    let tab = format!("{tab}:{}", project.relative(&file.path));
    let outcome =
        crate::project::edits::review_only(state, &file.path, &before, new_text, &title, tab).await;
    match outcome {
        DiffOutcome::Accepted(text) => {
            if before.proposal(&text) != before.proposal(new_text) {
                chat.outbox.notice(
                    "info",
                    format!(
                        "you changed the proposal of {}: it is written as you left it when {} \
                         writes through Neovim; an agent that writes files itself writes its own",
                        project.relative(&file.path),
                        chat.agent
                    ),
                );
            }
            crate::mutex::lock(&chat.approved)
                .insert(file.path.clone(), (new_text.to_owned(), text));
            Some(true)
        }
        DiffOutcome::Rejected { reason: None } | DiffOutcome::Declined(_) | DiffOutcome::Closed => {
            Some(false)
        }
        DiffOutcome::Rejected { reason: Some(_) } => None,
    }
}

/// The agent's option of the kind the review decided: allow once before
/// always, reject once before always.
fn pick(options: &Json, allowed: bool) -> Option<String> {
    let kinds: [&str; 2] = match allowed {
        true => ["allow_once", "allow_always"],
        false => ["reject_once", "reject_always"],
    };
    let options = options.as_array()?;
    kinds.iter().find_map(|kind| {
        options
            .iter()
            .find(|option| option["kind"] == *kind)
            .and_then(|option| option["optionId"].as_str())
            .map(str::to_owned)
    })
}

/// What the tool call will do, as text for the question.
fn tool_call_text(tool_call: &Json) -> String {
    let mut parts: Vec<String> = tool_call["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|content| content["type"] == "content")
        .map(|content| super::updates::content_text(&content["content"]))
        .collect();
    if parts.is_empty()
        && let Some(input) = tool_call["rawInput"].as_object()
    {
        parts.push(serde_json::to_string(input).unwrap_or_default());
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_review_picks_the_agents_own_option() {
        let options = json!([
            {"optionId": "a1", "name": "Always", "kind": "allow_always"},
            {"optionId": "o1", "name": "Once", "kind": "allow_once"},
            {"optionId": "r1", "name": "No", "kind": "reject_once"},
        ]);
        assert_eq!(pick(&options, true).as_deref(), Some("o1"));
        assert_eq!(pick(&options, false).as_deref(), Some("r1"));
        let only_always = json!([{"optionId": "a1", "name": "Always", "kind": "allow_always"}]);
        assert_eq!(pick(&only_always, true).as_deref(), Some("a1"));
        assert_eq!(
            pick(&only_always, false),
            None,
            "no reject option: cancelled"
        );
    }
}
