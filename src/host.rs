//! Wiring: attach to Neovim, listen, write the lockfile, run the editor event
//! loop, and shut down cleanly (every pending diff answered, lockfile gone).

use std::io;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, watch};

use crate::config::Config;
use crate::diffs::{DiffOutcome, Diffs, PendingDiff};
use crate::hub::{ClientId, ClientKind, Hub};
use crate::jsonrpc;
use crate::lockfile::{self, LockInfo, Lockfile};
use crate::nvim::editor::Editor;
use crate::nvim::handler::{EditorEvent, NvimHandler};
use crate::outgoing::Outgoing;
use crate::outline::worker::Worker;
use crate::selection::Positions;
use crate::suggest::{self, Suggestions};

/// How long connections get to flush their last replies at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// State every transport and tool shares; none of it knows about sockets.
pub struct Shared {
    pub hub: Hub,
    pub diffs: Diffs,
    pub editor: Editor,
    /// The secret agents must present in the handshake.
    pub token: String,
    /// Mirrors of buffers that asked for suggestions, with their syntax trees.
    pub outline: Worker,
    /// Requests we sent to agents, waiting for answers.
    pub outgoing: Outgoing,
    /// Suggestion requests in flight, for cancellation.
    pub suggestions: Suggestions,
}

impl Shared {
    /// Answers a pending diff and closes its windows.
    pub fn finish_diff(&self, diff: PendingDiff, outcome: DiffOutcome) {
        self.editor.close_diff(diff.id);
        diff.answer(outcome);
    }

    /// A client left: its diffs close, Lua hears about it.
    pub fn client_gone(&self, client: ClientId) {
        self.outgoing.forget_client(client);
        for diff in self.diffs.take_client(client) {
            self.finish_diff(diff, DiffOutcome::rejected("the agent disconnected"));
        }
        if let Some(entry) = self.hub.unregister(client) {
            self.editor.push(
                "pi-ide.host",
                "_on_client",
                vec![
                    json!("disconnected"),
                    client_json(client, entry.kind, entry.name),
                ],
            );
        }
    }

    /// Sends the current editor context to one client (right after `initialize`).
    pub async fn push_selection(&self, client: ClientId) {
        match self.editor.current_positions().await {
            Ok(Some(positions)) => {
                if let Some(message) = self.selection_message(&positions).await {
                    self.hub.send(client, message);
                }
            }
            Ok(None) => {}
            Err(error) => tracing::warn!("cannot read the current position: {error}"),
        }
    }

    async fn selection_message(&self, positions: &Positions) -> Option<String> {
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

/// `{id, kind, name}` as Lua's status mirror stores it.
pub fn client_json(id: ClientId, kind: ClientKind, name: Option<String>) -> Value {
    json!({"id": id.0, "kind": kind.as_str(), "name": name})
}

pub async fn run(config: Config) -> io::Result<()> {
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let outline = Worker::spawn()?;
    let (nvim, io_loop) =
        nvim_rs::create::tokio::new_parent(NvimHandler::new(events_tx, outline.clone())).await?;
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let port = listener.local_addr()?.port();
    let dir = config
        .lock_dir
        .clone()
        .or_else(lockfile::default_dir)
        .ok_or_else(|| io::Error::other("no lock directory: set $PI_IDE_LOCK_DIR or $HOME"))?;
    let removed = lockfile::remove_stale(&dir);
    let token = crate::auth::new_token();
    let info = LockInfo {
        pid: config.nvim_pid,
        workspace_folders: vec![config.cwd.clone()],
        ide_name: lockfile::IDE_NAME.into(),
        transport: "ws".into(),
        auth_token: token.clone(),
    };
    let mut lock = Lockfile::create(&dir, port, info).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot write a lockfile in {}: {e}", dir.display()),
        )
    })?;
    // Logging starts once agents can find us: opening the log costs ~2 ms.
    let _log_guard = crate::logging::init(&config);
    tracing::info!(
        "listening on 127.0.0.1:{port}, lockfile {} ({removed} stale removed)",
        lock.path().display()
    );

    let shared = Arc::new(Shared {
        hub: Hub::default(),
        diffs: Diffs::default(),
        editor: Editor::new(nvim),
        token,
        outline,
        outgoing: Outgoing::default(),
        suggestions: Suggestions::default(),
    });
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    tokio::spawn(crate::mcp::server::serve(
        listener,
        shared.clone(),
        shutdown_rx,
    ));
    shared.editor.push(
        "pi-ide.host",
        "_on_started",
        vec![json!({
            "version": env!("CARGO_PKG_VERSION"),
            "seam": crate::SEAM_VERSION,
            "port": port,
            "lockfile": lock.path(),
            "pid": std::process::id(),
            "languages": crate::outline::languages::filetypes(),
        })],
    );

    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    // Ctrl-C in Neovim's terminal must not take the host down with it.
    let mut interrupt = signal(SignalKind::interrupt())?;
    tokio::pin!(io_loop);
    loop {
        tokio::select! {
            _ = &mut io_loop => { tracing::info!("Neovim closed the channel"); break }
            _ = terminate.recv() => { tracing::info!("SIGTERM"); break }
            _ = hangup.recv() => { tracing::info!("SIGHUP"); break }
            _ = interrupt.recv() => {}
            event = events.recv() => match event {
                None | Some(EditorEvent::Stop) => break,
                Some(EditorEvent::Selection(positions)) => {
                    if !shared.hub.is_empty() && let Some(message) = shared.selection_message(&positions).await {
                        shared.hub.broadcast(&message);
                    }
                }
                Some(EditorEvent::DiffDecided { id, outcome }) => {
                    if let Some(diff) = shared.diffs.take(id) {
                        diff.answer(outcome);
                    }
                }
                Some(EditorEvent::Suggest(request)) => {
                    shared.suggestions.begin(request.token);
                    tokio::spawn(suggest::run(shared.clone(), request));
                }
                Some(EditorEvent::SuggestCancel(token)) => suggest::cancel(&shared, token),
                Some(EditorEvent::ListModels) => {
                    tokio::spawn(suggest::list_models(shared.clone()));
                }
                Some(EditorEvent::Cwd(dir)) => {
                    if let Err(error) = lock.set_workspace_folders(vec![dir]) {
                        tracing::warn!("cannot update the lockfile: {error}");
                    }
                }
            },
        }
    }

    for diff in shared.diffs.take_all() {
        diff.answer(DiffOutcome::rejected("Neovim is closing"));
    }
    lock.remove();
    let _ = shutdown_tx.send(true);
    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    while !shared.hub.is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tracing::info!("stopped");
    Ok(())
}
