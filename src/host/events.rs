//! Every event Lua sends the host, and what each does. [`Inbox::receive`]
//! runs on nvim-rs's I/O loop: diagnostics are applied there, before any
//! later message is read (a `getDiagnostics` after a save sees them); the
//! rest queue for [`handle`], on the host's loop, in the order Lua sent them.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use super::announce::Announcements;
use crate::changes::{self, Changes};
use crate::client::ClientKind;
use crate::codex;
use crate::context_review;
use crate::diagnostics::Mirror;
use crate::diff::pending::DiffOutcome;
use crate::file_watch::FileWatch;
use crate::ide_companion;
use crate::jsonrpc;
use crate::mcp_http;
use crate::nvim::handler::EventSink;
use crate::nvim::seam::{Decision, EditorEvent};
use crate::opencode;
use crate::state::State;
use crate::state::outbox::Latest;
use crate::suggest;

/// Where Neovim's handler puts the events it parsed.
pub struct Inbox {
    diagnostics: Arc<Mirror>,
    queue: UnboundedSender<EditorEvent>,
}

impl Inbox {
    /// The inbox, and the queue the host's loop reads.
    pub fn new(diagnostics: Arc<Mirror>) -> (Arc<Inbox>, UnboundedReceiver<EditorEvent>) {
        let (queue, events) = mpsc::unbounded_channel();
        (Arc::new(Inbox { diagnostics, queue }), events)
    }
}

impl EventSink for Inbox {
    fn receive(&self, event: EditorEvent) {
        match event {
            EditorEvent::DiagnosticsPending => self.diagnostics.mark_pending(),
            EditorEvent::Diagnostics(files) => self.diagnostics.update(files),
            event => {
                let _ = self.queue.send(event);
            }
        }
    }
}

/// What the events change besides the shared state.
pub struct Wiring<'a> {
    pub state: &'a Arc<State>,
    pub chats: &'a crate::acp::Chats,
    pub announced: &'a mut Announcements,
    pub files: &'a FileWatch,
    /// Baselines of the project and the review of what changed since.
    pub changes: &'a Arc<Changes>,
    /// The opencodes whose servers are followed.
    pub opencode: &'a mut opencode::Followed,
}

/// Whether the host goes on after an event.
pub enum Next {
    Continue,
    Stop,
}

pub async fn handle(wiring: &mut Wiring<'_>, event: EditorEvent) -> Next {
    let state = wiring.state;
    match event {
        EditorEvent::Stop => return Next::Stop,
        EditorEvent::Cwd { dir, root } => {
            wiring.announced.set_workspace(&dir, &root);
            if state.set_root(PathBuf::from(root)) {
                crate::task::spawn(context_review::context::root_moved(state.clone()));
            }
        }
        EditorEvent::WatchFiles(paths) => wiring.files.set(paths),
        EditorEvent::FileWritten(path) => wiring.files.written(&path),
        EditorEvent::Selection(positions) => {
            if state.clients().any_jsonrpc()
                && let Some(message) = state.selection_message(&positions).await
            {
                state
                    .clients()
                    .broadcast_latest(Latest::Selection, &message);
            }
            context_review::context::broadcast(state, Some(&positions));
            // The selected rows, read once (bounded) for whoever wants them.
            let wanted = ide_companion::context::wants_rows(state)
                .max(codex::context::wants_rows(state, &positions));
            let rows = match wanted {
                Some(bytes) => {
                    ide_companion::context::selected_rows(state, &positions, bytes).await
                }
                None => None,
            };
            ide_companion::context::on_selection(state, &positions, rows.as_deref());
            codex::context::on_selection(state, &positions, rows.as_deref());
        }
        EditorEvent::LspAnswer(answer) | EditorEvent::ToolAnswer(answer) => {
            state.lsp().answer(answer)
        }
        EditorEvent::ToolsChanged(tools) => mcp_http::user_tools::changed(state, tools),
        EditorEvent::ProposeEdit(edit) => {
            crate::task::spawn(mcp_http::user_tools::propose_from_lua(state.clone(), edit));
        }
        EditorEvent::NoFile => context_review::context::broadcast(state, None),
        EditorEvent::RootsChanged => state.project_roots().invalidate(),
        EditorEvent::ReviewDone(done) => context_review::review::done(state, done),
        EditorEvent::DiffDecided(Decision {
            id,
            accepted,
            reason,
        }) => {
            if let Some(diff) = state.diffs().take(id) {
                diff.answer(match (accepted, reason) {
                    (Some(text), _) => DiffOutcome::Accepted(text),
                    (None, Some(why)) => DiffOutcome::Declined(why),
                    (None, None) => DiffOutcome::Rejected { reason: None },
                });
            }
        }
        EditorEvent::DiffClosed(id) => {
            if let Some(diff) = state.diffs().take(id) {
                diff.answer(DiffOutcome::Closed);
            }
        }
        EditorEvent::DiffEdited(edit) => state.diff_edited(edit),
        EditorEvent::Suggest(request) => suggest::start(state, request),
        EditorEvent::SuggestCancel(token) => suggest::cancel(state, token),
        EditorEvent::Mention(mention) => {
            let message = jsonrpc::notification("at_mentioned", serde_json::json!(mention));
            let sent = state.clients().broadcast_to(ClientKind::Claude, &message);
            tracing::info!(
                "at-mention of {} sent to {sent} client(s)",
                mention.file_path
            );
        }
        EditorEvent::ChangesStart(request) => {
            let changes = wiring.changes.clone();
            crate::task::spawn(changes::start(state.clone(), changes, request));
        }
        EditorEvent::ChangesReview(request) => {
            let changes = wiring.changes.clone();
            crate::task::spawn(changes::review(state.clone(), changes, request));
        }
        EditorEvent::OpencodeFollow(server) => wiring.opencode.follow(state, server),
        EditorEvent::OpencodeForget(id) => wiring.opencode.forget(id),
        EditorEvent::OpencodePrompt(prompt) => wiring.opencode.prompt(prompt),
        EditorEvent::ListModels => {
            crate::task::spawn(suggest::list_models(state.clone()));
        }
        EditorEvent::Chat(op) => wiring.chats.handle(state, op),
        EditorEvent::ChatPermission(answer) => wiring.chats.permission(answer),
        EditorEvent::ChatTerminalExit(exit) => wiring.chats.terminal_exit(exit),
        // Applied by the inbox as they arrived.
        EditorEvent::DiagnosticsPending | EditorEvent::Diagnostics(_) => {}
    }
    Next::Continue
}
