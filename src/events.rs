//! What Neovim tells the host, turned into actions on the shared state.
//! Runs on the host's event loop, in the order Lua sent the events; the
//! lifecycle events (`stop`, `cwd`) and the file watch stay with the wiring
//! in [`crate::host`].

use std::sync::Arc;

use crate::client::ClientKind;
use crate::context_review;
use crate::diff::pending::DiffOutcome;
use crate::ide_companion;
use crate::jsonrpc;
use crate::mcp_http;
use crate::nvim::seam::{Decision, EditorEvent};
use crate::state::State;
use crate::state::outbox::Latest;
use crate::suggest;

pub async fn handle(state: &Arc<State>, event: EditorEvent) {
    match event {
        EditorEvent::Selection(positions) => {
            if state.clients.any_jsonrpc()
                && let Some(message) = state.selection_message(&positions).await
            {
                state.clients.broadcast_latest(Latest::Selection, &message);
            }
            context_review::context::broadcast(state, Some(&positions));
            ide_companion::context::on_selection(state, &positions).await;
        }
        EditorEvent::LspAnswer(answer) | EditorEvent::ToolAnswer(answer) => {
            state.lsp.answer(answer)
        }
        EditorEvent::ToolsChanged(tools) => mcp_http::user_tools::changed(state, tools),
        EditorEvent::ProposeEdit(edit) => {
            crate::task::spawn(mcp_http::user_tools::propose_from_lua(state.clone(), edit));
        }
        EditorEvent::NoFile => context_review::context::broadcast(state, None),
        EditorEvent::RootsChanged => state.project_roots.invalidate(),
        EditorEvent::ReviewDone(done) => context_review::review::done(state, done),
        EditorEvent::DiffDecided(Decision { id, accepted }) => {
            if let Some(diff) = state.diffs.take(id) {
                diff.answer(match accepted {
                    Some(text) => DiffOutcome::Accepted(text),
                    None => DiffOutcome::Rejected { reason: None },
                });
            }
        }
        EditorEvent::DiffClosed(id) => {
            if let Some(diff) = state.diffs.take(id) {
                diff.answer(DiffOutcome::Closed);
            }
        }
        EditorEvent::DiffEdited(edit) => state.diff_edited(edit),
        EditorEvent::Suggest(request) => suggest::start(state, request),
        EditorEvent::SuggestCancel(token) => suggest::cancel(state, token),
        EditorEvent::Mention(mention) => {
            let message = jsonrpc::notification("at_mentioned", serde_json::json!(mention));
            let sent = state.clients.broadcast_to(ClientKind::Claude, &message);
            tracing::info!(
                "at-mention of {} sent to {sent} client(s)",
                mention.file_path
            );
        }
        EditorEvent::ListModels => {
            crate::task::spawn(suggest::list_models(state.clone()));
        }
        // The handler applies diagnostics before any later message is read.
        EditorEvent::DiagnosticsPending | EditorEvent::Diagnostics(_) => {}
        EditorEvent::Cwd { .. }
        | EditorEvent::Stop
        | EditorEvent::WatchFiles(_)
        | EditorEvent::FileWritten(_) => {}
    }
}
