//! Wiring: attach to Neovim, bind the ports, announce them, start the
//! listeners, feed Neovim's events to [`events`] until Neovim stops us,
//! and shut down cleanly (every pending diff and review answered,
//! lockfiles and sockets gone, connections given a moment to send their
//! last replies).
//!
//! * [`bind`]     – the ports, each failing on its own.
//! * [`announce`] – the token, the lockfiles and discovery files agents read.
//! * [`events`]   – every event Lua sends, and what it does.

mod announce;
mod bind;
pub(crate) mod events;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::changes::Changes;
use crate::config::Config;
use crate::diagnostics::Mirror;
use crate::diff::pending::DiffOutcome;
use crate::file_watch::FileWatch;
use crate::http::server::Serving;
use crate::listen::Listeners;
use crate::nvim::IoLoop;
use crate::nvim::handler::NvimHandler;
use crate::nvim::seam::{EditorEvent, LuaCall, SEAM_VERSION, Started};
use crate::outline::worker::Worker;
use crate::state::{Settings, State};
use announce::{Announcements, Token};
use bind::Ports;
use events::{Inbox, Next, Wiring};

/// How long connections get to flush their last replies at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

pub async fn run(config: Config) -> io::Result<()> {
    let diagnostics = Arc::new(Mirror::default());
    let (inbox, events) = Inbox::new(diagnostics.clone());
    let outline = Worker::spawn()?;
    let (nvim, io_loop) = crate::nvim::attach_parent(NvimHandler::new(inbox, outline.clone()))?;
    let mut ports = Ports::bind(&config).await?;
    let token = Token::choose(&config, &ports);
    let mut announced = Announcements::write(&config, &mut ports, &token.value)?;
    // Logging starts once agents can find us: opening the log costs ~2 ms.
    let _log_guard = crate::logging::init(&config);
    let started = started(&ports, &mut announced, &token)?;
    log_started(&started, &ports, &announced);
    let settings = Settings {
        token: token.value,
        root: config.root.clone().into(),
        approve_edits: config.mcp_approve_edits,
        terminal_commands: config.mcp_terminal_commands,
        keeps_place: ports.codex.is_some(),
    };
    let endpoint = ports.mcp_url.clone().map(|url| crate::acp::Endpoint {
        url,
        token: settings.token.clone(),
    });
    let state = Arc::new(State::new(nvim, outline, diagnostics, settings));
    let chats = crate::acp::Chats::new(endpoint);
    let listeners = serve(&config, ports, &state)?;
    let editor = state.editor().clone();
    let files = FileWatch::new(move |changes| editor.push(LuaCall::FilesChanged(changes)));
    state.editor().push(LuaCall::Started(started));
    let changes = Arc::new(Changes::default());
    let mut opencode = crate::opencode::Followed::default();
    let mut wiring = Wiring {
        state: &state,
        chats: &chats,
        announced: &mut announced,
        files: &files,
        changes: &changes,
        opencode: &mut opencode,
    };
    let broken = until_stopped(io_loop, events, &mut wiring).await?;
    chats.stop_all();
    shut_down(&state, &announced, listeners).await;
    broken.map_or(Ok(()), |why| Err(io::Error::other(why)))
}

/// What Lua hears once the host serves: where, and what went wrong.
fn started(ports: &Ports, announced: &mut Announcements, token: &Token) -> io::Result<Started> {
    Ok(Started {
        version: env!("CARGO_PKG_VERSION"),
        seam: SEAM_VERSION,
        port: ports.port()?,
        lockfile: announced.pi_path.clone(),
        claude_lockfile: announced.claude_lockfile.clone(),
        claude_error: announced.claude_error.clone(),
        pid: std::process::id(),
        mcp_url: ports.mcp_url.clone(),
        mcp_error: ports.mcp_error.clone(),
        mcp_token_file: token.file.clone(),
        mcp_token_warning: token.warning.clone(),
        languages: crate::outline::languages::filetypes(),
        companions: std::mem::take(&mut announced.companions),
        companion_error: announced.companion_error.clone(),
        codex: ports.codex.as_ref().map(|codex| codex.info()),
        codex_error: ports.codex_error.clone(),
    })
}

fn log_started(started: &Started, ports: &Ports, announced: &Announcements) {
    tracing::info!(
        "listening on 127.0.0.1:{}, lockfile {} ({} stale removed)",
        started.port,
        started.lockfile,
        announced.stale_removed
    );
    if let Some(path) = &started.claude_lockfile {
        tracing::info!("announced to Claude Code in {path}");
    }
    for problem in ports
        .port_taken
        .iter()
        .chain(&started.claude_error)
        .chain(&started.mcp_error)
        .chain(&started.mcp_token_warning)
        .chain(&started.companion_error)
        .chain(&started.codex_error)
    {
        tracing::warn!("{problem}");
    }
}

/// Starts a listener on every port bound, and pi's context socket.
fn serve(config: &Config, ports: Ports, state: &Arc<State>) -> io::Result<Listeners> {
    let listeners = Listeners::default();
    listeners.serve(crate::ws::server::listener(ports.websocket, state.clone()));
    if let Some(listener) = ports.mcp {
        tracing::info!("MCP endpoint {}", ports.mcp_url.as_deref().unwrap_or(""));
        listeners.serve(crate::http::server::listener(
            listener,
            state.clone(),
            config.mcp_session_idle,
            Serving::Mcp,
        ));
    }
    for (kind, _, listener) in ports.companions {
        tracing::info!("{} companion on {}", kind.as_str(), listener.local_addr()?);
        listeners.serve(crate::http::server::listener(
            listener,
            state.clone(),
            config.mcp_session_idle,
            Serving::Companion(kind),
        ));
    }
    if let Some(codex) = ports.codex {
        for bound in &codex.bound {
            tracing::info!("Codex socket {}", bound.file.path().display());
        }
        if let Some(note) = &codex.shared_note {
            tracing::info!("Codex's shared socket: {note}");
        }
        listeners.serve(crate::codex_ipc::server::listener(
            codex.bound,
            Some(codex.places.private_tmpdir),
            state.clone(),
        ));
    }
    if let Some(name) = config.context_socket.clone() {
        listeners.serve(crate::socket::server::listener(
            name,
            config.nvim_pid,
            state.clone(),
        ));
    }
    Ok(listeners)
}

/// Handles Neovim's events until it stops us, closes the channel or a
/// signal comes; why, when it was not Neovim's wish.
async fn until_stopped(
    io_loop: IoLoop,
    mut events: UnboundedReceiver<EditorEvent>,
    wiring: &mut Wiring<'_>,
) -> io::Result<Option<String>> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    // Ctrl-C in Neovim's terminal must not take the host down with it.
    let mut interrupt = signal(SignalKind::interrupt())?;
    // `kill -USR1 <pid>`: what the host holds, into its log (for a soak,
    // or a person wondering whether it leaks).
    let mut counts = signal(SignalKind::user_defined1())?;
    tokio::pin!(io_loop);
    loop {
        tokio::select! {
            ended = &mut io_loop => return Ok(crate::nvim::channel_failure(ended)),
            _ = terminate.recv() => { tracing::info!("SIGTERM"); return Ok(None) }
            _ = hangup.recv() => { tracing::info!("SIGHUP"); return Ok(None) }
            _ = interrupt.recv() => {}
            _ = counts.recv() => tracing::info!(
                "counts: {} tasks alive",
                tokio::runtime::Handle::current().metrics().num_alive_tasks()
            ),
            event = events.recv() => match event {
                None => return Ok(None),
                Some(event) => if let Next::Stop = events::handle(wiring, event).await {
                    return Ok(None);
                },
            },
        }
    }
}

/// Answers what is pending, removes what agents read, and gives the
/// connections their grace.
async fn shut_down(state: &State, announced: &Announcements, listeners: Listeners) {
    for diff in state.diffs().take_all() {
        diff.answer(DiffOutcome::rejected("Neovim is closing"));
    }
    crate::context_review::review::shutdown(state);
    announced.remove();
    listeners.stop(SHUTDOWN_GRACE).await;
    tracing::info!("stopped");
}
