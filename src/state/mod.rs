//! State every transport, tool and feature shares: connected clients,
//! pending diffs, requests sent to agents, the diagnostics mirror and the
//! handle on Neovim. None of it knows about sockets.
//!
//! * [`clients`]  – connected clients and their outboxes.
//! * [`outbox`]   – one client's bounded queue, latest values coalesced.
//! * [`outgoing`] – requests sent to agents, waiting for answers.
//! * [`parts`]    – large diffs sent to Lua in parts while they are diffed.
//! * [`recent`]   – the files the person worked in lately (companion context).
//! * [`place`]    – where the person last was, for agents that ask (Codex).
//! * [`rediff`]   – re-diffing large diffs after edits, off the UI thread.
//! * [`reviews`]  – the one review session a client may have open.
//! * [`user_tools`] – MCP tools registered from Lua, and who to tell.

pub mod clients;
pub mod lsp;
pub mod outbox;
pub mod outgoing;
pub mod parts;
pub mod place;
pub mod recent;
pub mod rediff;
pub mod reviews;
pub mod roots;
pub mod user_tools;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;

use crate::client::{ClientId, ClientKind, Protocol, Requester};
use crate::diagnostics::Mirror;
use crate::diff::live::LiveDiffs;
use crate::diff::pending::{DiffOutcome, PendingDiff, PendingDiffs};
use crate::diff::prepare::{DiffView, EditInfo, Prepared};
use crate::jsonrpc;
use crate::nvim::editor::{Editor, Nvim};
use crate::nvim::seam::{ClientEvent, ClientInfo, LuaCall};
use crate::outline::worker::Worker;
use crate::selection::Positions;
use clients::{ClientEntry, Clients};
use outbox::{Latest, OutboxSender};
use outgoing::Outgoing;
use reviews::Reviews;

/// Each part belongs to the concern in its own file; the rest of the host
/// reaches them through the methods below.
pub struct State {
    clients: Clients,
    diffs: PendingDiffs,
    live_diffs: LiveDiffs,
    outgoing: Outgoing,
    diagnostics: Arc<Mirror>,
    editor: Editor,
    outline: Worker,
    token: String,
    root: watch::Sender<PathBuf>,
    reviews: Reviews,
    lsp: lsp::LspRequests,
    project_roots: roots::RootsCache,
    approve_edits: bool,
    terminal_commands: bool,
    user_tools: user_tools::UserTools,
    recent: recent::RecentFiles,
    place: place::LastPlace,
    keeps_place: bool,
}

/// What the command line decided for the whole run.
pub struct Settings {
    pub token: String,
    pub root: PathBuf,
    pub approve_edits: bool,
    pub terminal_commands: bool,
    /// Keep where the person is for agents that ask without a connection
    /// of their own (Codex's IDE channel is served).
    pub keeps_place: bool,
}

/// Which file an `openDiff` is about, and the tab the agent named.
pub struct DiffTarget {
    pub tab_name: String,
    pub path: String,
    pub original_path: String,
    /// For an MCP tool's edit: its group and where the left side is from.
    pub edit: Option<EditInfo>,
}

impl State {
    pub fn new(nvim: Nvim, outline: Worker, diagnostics: Arc<Mirror>, settings: Settings) -> Self {
        State {
            clients: Clients::default(),
            diffs: PendingDiffs::default(),
            live_diffs: LiveDiffs::default(),
            outgoing: Outgoing::default(),
            diagnostics,
            editor: Editor::new(nvim),
            outline,
            token: settings.token,
            root: watch::channel(settings.root).0,
            reviews: Reviews::default(),
            lsp: Default::default(),
            project_roots: Default::default(),
            approve_edits: settings.approve_edits,
            terminal_commands: settings.terminal_commands,
            user_tools: Default::default(),
            recent: Default::default(),
            place: Default::default(),
            keeps_place: settings.keeps_place,
        }
    }

    /// Connected clients and their outboxes.
    pub fn clients(&self) -> &Clients {
        &self.clients
    }

    /// `openDiff`s waiting for the person.
    pub fn diffs(&self) -> &PendingDiffs {
        &self.diffs
    }

    /// Both sides of each open large diff, for re-diffing after edits.
    pub fn live_diffs(&self) -> &LiveDiffs {
        &self.live_diffs
    }

    /// Requests we sent to agents, waiting for answers.
    pub fn outgoing(&self) -> &Outgoing {
        &self.outgoing
    }

    /// What `getDiagnostics` answers from; Neovim's events feed it.
    pub fn diagnostics(&self) -> &Arc<Mirror> {
        &self.diagnostics
    }

    /// The handle on Neovim.
    pub fn editor(&self) -> &Editor {
        &self.editor
    }

    /// Mirrors of buffers that asked for suggestions, with their syntax trees.
    pub fn outline(&self) -> &Worker {
        &self.outline
    }

    /// The secret agents must present.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The project root: the git root of Neovim's cwd, else the cwd.
    pub fn root(&self) -> PathBuf {
        self.root.borrow().clone()
    }

    /// The project root, now and as it moves.
    pub fn follow_root(&self) -> watch::Receiver<PathBuf> {
        self.root.subscribe()
    }

    /// The review a client asked for, while it is open.
    pub fn reviews(&self) -> &Reviews {
        &self.reviews
    }

    /// LSP requests Lua has not answered yet.
    pub fn lsp(&self) -> &lsp::LspRequests {
        &self.lsp
    }

    /// Neovim's project roots, kept between MCP tool calls.
    pub fn project_roots(&self) -> &roots::RootsCache {
        &self.project_roots
    }

    /// Whether MCP tools' edits wait for the person's approval in a diff
    /// (option `mcp.approve_edits`); false: applied to buffers at once.
    pub fn approve_edits(&self) -> bool {
        self.approve_edits
    }

    /// Whether `execute_terminal_command` is offered (option
    /// `mcp.terminal_commands`).
    pub fn terminal_commands(&self) -> bool {
        self.terminal_commands
    }

    /// The MCP tools the person's config registered in Lua.
    pub fn user_tools(&self) -> &user_tools::UserTools {
        &self.user_tools
    }

    /// The files the person worked in lately, for companion clients.
    pub fn recent(&self) -> &recent::RecentFiles {
        &self.recent
    }

    /// Where the person last was in a file, when it is kept.
    pub fn place(&self) -> &place::LastPlace {
        &self.place
    }

    /// Whether [`State::place`] is kept (an agent asks for it per prompt).
    pub fn keeps_place(&self) -> bool {
        self.keeps_place
    }

    /// The project root moved (after `:cd`); the context socket follows.
    /// True when it moved.
    pub fn set_root(&self, root: PathBuf) -> bool {
        self.root.send_if_modified(|current| {
            let changed = *current != root;
            *current = root;
            changed
        })
    }

    /// A transport accepted a client; replies go to `outbox`.
    pub fn client_connected(
        &self,
        kind: ClientKind,
        protocol: Protocol,
        outbox: OutboxSender,
    ) -> ClientId {
        let client = self.clients.register(kind, protocol, outbox);
        self.push_client(ClientEvent::Connected, client);
        client
    }

    /// The client said who it is in `initialize`.
    pub fn client_named(&self, client: ClientId, name: String) {
        self.clients.set_name(client, name);
        self.push_client(ClientEvent::Initialized, client);
    }

    /// Finds which local process a client is, off the event loop (pi says
    /// nothing about itself), unless it told us first.
    pub fn find_client_pid(
        self: &Arc<Self>,
        client: ClientId,
        peer: SocketAddr,
        local: SocketAddr,
    ) {
        let state = self.clone();
        crate::task::spawn(async move {
            let found = crate::task::spawn_blocking(move || crate::peer::pid_of(peer, local)).await;
            if let Ok(Some(pid)) = found
                && state
                    .clients
                    .entry(client)
                    .is_some_and(|entry| entry.pid.is_none())
            {
                state.client_pid(client, pid);
            }
        });
    }

    /// Claude said which process it is (`ide_connected {pid}`).
    pub fn client_pid(&self, client: ClientId, pid: u32) {
        self.clients.set_pid(client, pid);
        self.push_client(ClientEvent::Updated, client);
    }

    /// Tells Lua what is known about a connected client.
    fn push_client(&self, event: ClientEvent, client: ClientId) {
        if let Some(entry) = self.clients.entry(client) {
            self.editor
                .push(LuaCall::Client(event, client_info(client, &entry)));
        }
    }

    /// A client left: its requests end, its diffs and review close, Lua
    /// hears about it.
    pub fn client_gone(&self, client: ClientId) {
        self.outgoing.forget_client(client);
        if let Some(id) = self.reviews.take_client(client) {
            self.editor.push(LuaCall::ReviewClose {
                id,
                reason: "the agent that asked for it disconnected".into(),
            });
        }
        for diff in self.diffs.take_client(client) {
            self.finish_diff(diff, DiffOutcome::rejected("the agent disconnected"));
        }
        if let Some(entry) = self.clients.unregister(client) {
            self.editor.push(LuaCall::Client(
                ClientEvent::Disconnected,
                client_info(client, &entry),
            ));
        }
    }

    /// Answers a pending diff and closes its windows, telling the person why.
    pub fn finish_diff(&self, diff: PendingDiff, outcome: DiffOutcome) {
        let reason = match &outcome {
            DiffOutcome::Rejected { reason } => reason.clone(),
            DiffOutcome::Accepted(_) | DiffOutcome::Closed | DiffOutcome::Declined(_) => None,
        };
        self.editor.push(LuaCall::CloseDiff {
            id: diff.id,
            reason,
            taken: false,
        });
        diff.answer(outcome);
    }

    /// Closes a diff the agent took back, telling the person `notice`;
    /// `taken`: the agent has the proposal as they left it, so their edits
    /// need no copy in Neovim. Answers it `outcome`.
    pub fn take_back_diff(
        &self,
        diff: PendingDiff,
        notice: String,
        taken: bool,
        outcome: DiffOutcome,
    ) {
        self.editor.push(LuaCall::CloseDiff {
            id: diff.id,
            reason: Some(notice),
            taken,
        });
        diff.answer(outcome);
    }

    /// Shows a diff and waits until the person, the agent or shutdown ends it.
    pub async fn show_diff(
        &self,
        requester: impl Into<Requester>,
        target: DiffTarget,
        sides: Prepared,
    ) -> DiffOutcome {
        let requester = requester.into();
        let begun = self.diffs.begin(requester, &target.tab_name);
        if let Some(old) = begun.replaced {
            self.finish_diff(
                old,
                DiffOutcome::rejected("replaced by a newer openDiff with the same tab_name"),
            );
        }
        let mut sides = sides;
        let content = sides.take_content();
        if let Some(content) = &content {
            let (original, proposed) = (&content.original, &content.proposed);
            self.live_diffs
                .insert(begun.id, original.clone(), proposed.clone());
        }
        let view = DiffView {
            id: begun.id,
            tab_name: target.tab_name,
            path: target.path,
            original_path: target.original_path,
            client: self.owner(requester),
            client_id: match requester {
                Requester::Client(client) => Some(client.0),
                Requester::Mcp | Requester::Changes | Requester::Agent(_) => None,
            },
            sides,
            edit: target.edit,
        };
        match self.editor.call(LuaCall::OpenDiff(Box::new(view))).await {
            Err(error) => {
                if let Some(diff) = self.diffs.take(begun.id) {
                    diff.answer(DiffOutcome::rejected(format!(
                        "Neovim could not show the diff: {error}"
                    )));
                }
            }
            Ok(answer) => {
                if let Some(content) = content {
                    match parts::DiffBuffers::of(&answer) {
                        Some(buffers) => self.send_parts(begun.id, content, buffers).await,
                        None => self.refuse_parts(begun.id, "open_diff named no buffers".into()),
                    }
                }
            }
        }
        let outcome = begun
            .answer
            .await
            .unwrap_or_else(|_| DiffOutcome::rejected("the diff was dropped"));
        self.live_diffs.remove(begun.id);
        outcome
    }

    /// Who asks, for the winbar and `:PiIde status`.
    fn owner(&self, requester: Requester) -> &'static str {
        match requester {
            Requester::Mcp => "mcp",
            Requester::Changes => "changes",
            Requester::Agent(name) => name,
            Requester::Client(client) => self
                .clients
                .entry(client)
                .map_or(ClientKind::Pi.as_str(), |entry| entry.label()),
        }
    }

    /// Sends the current editor context to one client (right after `initialize`).
    pub async fn push_selection(&self, client: ClientId) {
        match self.editor.current_positions().await {
            Ok(Some(positions)) => {
                if let Some(message) = self.selection_message(&positions).await {
                    self.clients.send_latest(client, Latest::Selection, message);
                }
            }
            Ok(None) => {}
            Err(error) => tracing::warn!("cannot read the current position: {error}"),
        }
    }

    /// `selection_changed` for `positions`, with the selected text read from Neovim.
    pub async fn selection_message(&self, positions: &Positions) -> Option<String> {
        let (first, last) = positions.rows();
        match self.editor.lines(positions.buf, first, last).await {
            Ok(lines) => Some(jsonrpc::notification(
                "selection_changed",
                positions.to_params(&lines),
            )),
            Err(error) => {
                tracing::warn!("cannot read selected lines: {error}");
                None
            }
        }
    }
}

fn client_info(id: ClientId, entry: &ClientEntry) -> ClientInfo {
    ClientInfo {
        id: id.0,
        kind: entry.label(),
        name: entry.name.clone(),
        pid: entry.pid,
    }
}
