//! Inline suggestions: Neovim asks, the host adds tree-sitter context, sends
//! `getSuggestions` to the connected pi agent and hands the answer back to
//! Lua — unless the person moved on, in which case the request was
//! cancelled with `request_cancelled` and Lua hears nothing.
//!
//! * [`context`] – outline, scope and comment flag from the buffer mirror.
//! * [`payload`] – the params pi understands and the answer's suggestions.

pub mod context;
pub mod payload;

use std::sync::Arc;

use serde_json::{Value, json};

use crate::client::ClientKind;
use crate::nvim::seam::{LuaCall, SuggestRequest};
use crate::state::State;
use crate::state::outgoing::{Ended, Outcome, Ticket};

const NO_AGENT: &str = "no pi agent is connected (run /ide in pi)";

/// Starts one request; called in the order Lua's events arrive, so a cancel
/// that follows finds it reserved.
pub fn start(state: &Arc<State>, request: SuggestRequest) {
    let ticket = state.outgoing().reserve(Some(request.token));
    crate::task::spawn(run(state.clone(), request, ticket));
}

/// Lua moved on: cancels request `token` and tells its agent.
pub fn cancel(state: &State, token: u64) {
    state.outgoing().cancel(state.clients(), token);
}

async fn run(state: Arc<State>, request: SuggestRequest, ticket: Ticket) {
    let outcome = match suggest(&state, &request, ticket).await {
        Err(Ended::Cancelled) => return,
        Err(ended) => Err(ended.message().to_owned()),
        Ok(Err(message)) => Err(message),
        Ok(Ok(result)) => Ok(payload::suggestions_of(&result, request.count)),
    };
    state.editor().push(LuaCall::Suggestions {
        token: request.token,
        outcome,
    });
}

/// The agent's answer: its result, or its error's message.
async fn suggest(
    state: &State,
    request: &SuggestRequest,
    ticket: Ticket,
) -> Result<Result<Value, String>, Ended> {
    let Some(client) = state.clients().latest(ClientKind::Pi) else {
        state.outgoing().withdraw(ticket);
        return Ok(Err(NO_AGENT.into()));
    };
    let context = context::tree_context(state, request).await;
    let params = payload::payload(request, context);
    state
        .outgoing()
        .send(state.clients(), &ticket, client, "getSuggestions", params);
    let answer = ticket.answer.await.unwrap_or(Err(Ended::AgentGone))?;
    Ok(answer.map_err(|error| error_message(&error).to_owned()))
}

/// `:PiIde model`: asks the pi agent which models it can use for suggestions.
pub async fn list_models(state: Arc<State>) {
    let outcome = match state.clients().latest(ClientKind::Pi) {
        None => Err(json!(NO_AGENT)),
        Some(client) => {
            let answer = state
                .outgoing()
                .request(state.clients(), client, "listSuggestionModels", json!({}))
                .await;
            models_outcome(answer.unwrap_or(Err(Ended::AgentGone)))
        }
    };
    state.editor().push(LuaCall::Models(outcome));
}

fn models_outcome(outcome: Outcome) -> Result<Value, Value> {
    match outcome {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(error)) => Err(json!(error_message(&error))),
        Err(ended) => Err(json!(ended.message())),
    }
}

/// The `message` of a JSON-RPC error object.
fn error_message(error: &Value) -> &str {
    error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the agent failed")
}
