//! Wiring: attach to Neovim, listen, write the lockfile, serve pi's context
//! socket, feed Neovim's events to [`crate::events`], and shut down cleanly
//! (every pending diff and review answered, lockfile and socket gone,
//! connections given a moment to send their last replies).

use std::io;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, watch};

use crate::client::ClientKind;
use crate::config::Config;
use crate::diagnostics::Mirror;
use crate::diff::live::LiveDiffs;
use crate::diff::pending::{DiffOutcome, PendingDiffs};
use crate::discovery::{Cli, Discovery};
use crate::file_watch::FileWatch;
use crate::http::server::Serving;
use crate::lockfile::{self, LockInfo, Lockfile, Lockfiles};
use crate::nvim::editor::Editor;
use crate::nvim::handler::NvimHandler;
use crate::nvim::seam::{Announced, EditorEvent, LuaCall, SEAM_VERSION, Started};
use crate::outline::worker::Worker;
use crate::state::State;
use crate::state::clients::Clients;
use crate::state::outgoing::Outgoing;
use crate::state::reviews::Reviews;

/// How long connections get to flush their last replies at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

pub async fn run(config: Config) -> io::Result<()> {
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let outline = Worker::spawn()?;
    let diagnostics = Arc::new(Mirror::default());
    let handler = NvimHandler::new(events_tx, outline.clone(), diagnostics.clone());
    let (nvim, io_loop) = crate::nvim::attach_parent(handler)?;
    let (listener, port_taken) = bind_websocket(config.port).await?;
    let port = listener.local_addr()?.port();
    let dir = config
        .lock_dir
        .clone()
        .or_else(lockfile::default_dir)
        .ok_or_else(|| io::Error::other("no lock directory: set $PI_IDE_LOCK_DIR or $HOME"))?;
    // A taken MCP port must not cost the agents the WebSocket server.
    let (mcp_listener, mcp_error) = match config.mcp_port {
        Some(mcp_port) => match TcpListener::bind((Ipv4Addr::LOCALHOST, mcp_port)).await {
            Ok(listener) => (Some(listener), None),
            Err(e) => (
                None,
                Some(format!(
                    "cannot listen for MCP on 127.0.0.1:{mcp_port}: {e}"
                )),
            ),
        },
        None => (None, None),
    };
    let mcp_url = match &mcp_listener {
        Some(listener) => Some(format!(
            "http://127.0.0.1:{}{}",
            listener.local_addr()?.port(),
            crate::http::PATH
        )),
        None => None,
    };
    let (companion_listeners, mut companion_errors) = bind_companions(&config).await;
    let removed = lockfile::remove_stale(&dir);
    // A fixed MCP port keeps its token, so a client configured once keeps
    // working; the lockfile carries the same token for every transport.
    let kept_token = match (&mcp_listener, config.mcp_port, &config.mcp_token_file) {
        (Some(_), Some(mcp_port), Some(file)) if mcp_port != 0 => {
            Some((file, crate::http::token::kept(file)))
        }
        _ => None,
    };
    let (token, mcp_token_file, mcp_token_warning) = match kept_token {
        Some((file, kept)) => (kept.token, Some(file.display().to_string()), kept.warning),
        None => (crate::auth::new_token(), None, None),
    };
    let info = LockInfo {
        pid: config.nvim_pid,
        workspace_folders: vec![config.cwd.clone()],
        ide_name: lockfile::IDE_NAME.into(),
        transport: "ws".into(),
        auth_token: token.clone(),
        mcp_url: mcp_url.clone(),
    };
    let pi_lock = Lockfile::create(&dir, port, info.clone()).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot write a lockfile in {}: {e}", dir.display()),
        )
    })?;
    let pi_path = pi_lock.path().display().to_string();
    let mut locks = Lockfiles::default();
    locks.push(pi_lock);
    // Claude Code finds IDEs only in its own directory; failing there must
    // not cost pi its editor.
    let claude = config.claude_lock_dir.as_deref().map(|claude_dir| {
        lockfile::remove_stale(claude_dir);
        Lockfile::create(claude_dir, port, info).map_err(|error| {
            format!(
                "cannot write Claude Code's lockfile in {}: {error}",
                claude_dir.display()
            )
        })
    });
    let (claude_lockfile, claude_error) = match claude {
        Some(Ok(lockfile)) => {
            let path = lockfile.path().display().to_string();
            locks.push(lockfile);
            (Some(path), None)
        }
        Some(Err(error)) => (None, Some(error)),
        None => (None, None),
    };
    let mut discoveries = Vec::new();
    let mut companions = Vec::new();
    let mut announced = Vec::new();
    let roots = workspace_roots(&config.cwd, &config.root);
    for (kind, cli, dir, listener) in companion_listeners {
        let companion_port = listener.local_addr()?.port();
        let created = Discovery::create(
            cli,
            &dir,
            config.nvim_pid,
            companion_port,
            &token,
            roots.clone(),
        );
        match created {
            Ok(discovery) => {
                announced.push(Announced {
                    client: kind.as_str(),
                    port: companion_port,
                    file: discovery.path().display().to_string(),
                });
                discoveries.push(discovery);
                companions.push((kind, listener));
            }
            Err(error) => companion_errors.push(format!(
                "cannot announce Neovim to {} in {}: {error}",
                kind.as_str(),
                dir.display()
            )),
        }
    }
    let companion_error = (!companion_errors.is_empty()).then(|| companion_errors.join("; "));
    // Logging starts once agents can find us: opening the log costs ~2 ms.
    let _log_guard = crate::logging::init(&config);
    tracing::info!("listening on 127.0.0.1:{port}, lockfile {pi_path} ({removed} stale removed)");
    if let Some(path) = &claude_lockfile {
        tracing::info!("announced to Claude Code in {path}");
    }
    for problem in port_taken
        .iter()
        .chain(&claude_error)
        .chain(&mcp_error)
        .chain(&mcp_token_warning)
        .chain(&companion_error)
    {
        tracing::warn!("{problem}");
    }

    let state = Arc::new(State {
        clients: Clients::default(),
        diffs: PendingDiffs::default(),
        live_diffs: LiveDiffs::default(),
        outgoing: Outgoing::default(),
        diagnostics,
        editor: Editor::new(nvim),
        outline,
        token,
        root: watch::channel(PathBuf::from(&config.root)).0,
        reviews: Reviews::default(),
        lsp: Default::default(),
        project_roots: Default::default(),
        approve_edits: config.mcp_approve_edits,
        terminal_commands: config.mcp_terminal_commands,
        user_tools: Default::default(),
        recent: Default::default(),
    });
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    // Every transport task holds a clone; the receiver closes when all ended.
    let (done_tx, mut all_done) = mpsc::channel::<()>(1);
    crate::task::spawn(crate::ws::server::serve(
        listener,
        state.clone(),
        shutdown_rx.clone(),
        done_tx.clone(),
    ));
    if let Some(listener) = mcp_listener {
        tracing::info!("MCP endpoint {}", mcp_url.as_deref().unwrap_or(""));
        crate::task::spawn(crate::http::server::serve(
            listener,
            state.clone(),
            config.mcp_session_idle,
            Serving::Mcp,
            shutdown_rx.clone(),
            done_tx.clone(),
        ));
    }
    for (kind, listener) in companions {
        tracing::info!("{} companion on {}", kind.as_str(), listener.local_addr()?);
        crate::task::spawn(crate::http::server::serve(
            listener,
            state.clone(),
            None,
            Serving::Companion(kind),
            shutdown_rx.clone(),
            done_tx.clone(),
        ));
    }
    if let Some(name) = config.context_socket.clone() {
        crate::task::spawn(crate::socket::server::serve(
            name,
            config.nvim_pid,
            state.clone(),
            shutdown_rx,
            done_tx.clone(),
        ));
    }
    drop(done_tx);
    let editor = state.editor.clone();
    let files = FileWatch::new(move |changes| editor.push(LuaCall::FilesChanged(changes)));
    state.editor.push(LuaCall::Started(Started {
        version: env!("CARGO_PKG_VERSION"),
        seam: SEAM_VERSION,
        port,
        lockfile: pi_path,
        claude_lockfile,
        claude_error,
        pid: std::process::id(),
        mcp_url,
        mcp_error,
        mcp_token_file,
        mcp_token_warning,
        languages: crate::outline::languages::filetypes(),
        companions: announced,
        companion_error,
    }));

    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    // Ctrl-C in Neovim's terminal must not take the host down with it.
    let mut interrupt = signal(SignalKind::interrupt())?;
    tokio::pin!(io_loop);
    // Why the host stops when Neovim did not ask it to; Lua shows it.
    let mut broken = None;
    loop {
        tokio::select! {
            ended = &mut io_loop => { broken = crate::nvim::channel_failure(ended); break }
            _ = terminate.recv() => { tracing::info!("SIGTERM"); break }
            _ = hangup.recv() => { tracing::info!("SIGHUP"); break }
            _ = interrupt.recv() => {}
            event = events.recv() => match event {
                None | Some(EditorEvent::Stop) => break,
                Some(EditorEvent::Cwd { dir, root }) => {
                    let roots = workspace_roots(&dir, &root);
                    for discovery in &mut discoveries {
                        discovery.set_workspace(&roots);
                    }
                    locks.set_workspace_folders(&[dir]);
                    let root = PathBuf::from(root);
                    state.root.send_if_modified(|current| {
                        let changed = *current != root;
                        *current = root;
                        changed
                    });
                }
                Some(EditorEvent::WatchFiles(paths)) => files.set(paths),
                Some(EditorEvent::FileWritten(path)) => files.written(&path),
                Some(event) => crate::events::handle(&state, event).await,
            },
        }
    }

    for diff in state.diffs.take_all() {
        diff.answer(DiffOutcome::rejected("Neovim is closing"));
    }
    crate::context_review::review::shutdown(&state);
    locks.remove();
    for discovery in &discoveries {
        discovery.remove();
    }
    let _ = shutdown_tx.send(true);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, all_done.recv()).await;
    tracing::info!("stopped");
    broken.map_or(Ok(()), |why| Err(io::Error::other(why)))
}

/// The companion listeners asked for (loopback, any free port), with the
/// CLI and directory each is announced in, and why any could not listen.
async fn bind_companions(
    config: &Config,
) -> (Vec<(ClientKind, Cli, PathBuf, TcpListener)>, Vec<String>) {
    let wanted = [
        (ClientKind::Gemini, Cli::Gemini, &config.gemini_dir),
        (ClientKind::Qwen, Cli::Qwen, &config.qwen_dir),
    ];
    let mut bound = Vec::new();
    let mut errors = Vec::new();
    for (kind, cli, dir) in wanted {
        let Some(dir) = dir else { continue };
        match TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await {
            Ok(listener) => bound.push((kind, cli, dir.clone(), listener)),
            Err(error) => errors.push(format!("cannot listen for {}: {error}", kind.as_str())),
        }
    }
    (bound, errors)
}

/// The workspace the companion CLIs match their cwd against: Neovim's cwd
/// and, when it differs, its project root.
fn workspace_roots(cwd: &str, root: &str) -> Vec<String> {
    let mut roots = vec![cwd.to_owned()];
    if !root.is_empty() && root != cwd {
        roots.push(root.to_owned());
    }
    roots
}

/// The WebSocket listener on `port`, or on any free port when that one is
/// taken (and why it was not used).
async fn bind_websocket(port: u16) -> io::Result<(TcpListener, Option<String>)> {
    if port != 0 {
        match TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await {
            Ok(listener) => return Ok((listener, None)),
            Err(error) => {
                let why = format!("port {port} is taken ({error}); listening on another one");
                let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
                return Ok((listener, Some(why)));
            }
        }
    }
    Ok((TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_taken_port_falls_back_to_a_free_one_and_says_why() {
        let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let port = taken.local_addr().unwrap().port();
        let (other, why) = bind_websocket(port).await.unwrap();
        assert_ne!(other.local_addr().unwrap().port(), port);
        assert!(why.unwrap().contains(&format!("port {port} is taken")));
        drop(taken);
        let (again, why) = bind_websocket(port).await.unwrap();
        assert_eq!(
            again.local_addr().unwrap().port(),
            port,
            "free again: bound"
        );
        assert_eq!(why, None);
    }
}
