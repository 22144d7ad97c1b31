//! Keeps the socket there and accepts on it: re-created within a poll
//! interval when deleted (pi deletes sockets that do not accept), moved when
//! the project root changes (`:cd`), removed when the host stops. Lua hears
//! where it is (`socket`), for `:PiIde status` and its own clean-up.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;
use tokio::time::Interval;

use super::file::{self, SocketFile};
use super::{MAX_CONNECTIONS, POLL_INTERVAL, connection};
use crate::listen::{Listener, Source};
use crate::nvim::seam::{LuaCall, SocketInfo};
use crate::state::State;

struct Bound {
    listener: UnixListener,
    file: SocketFile,
    /// The file's name without `.sock`: `nvim`, or `nvim-<pid>`.
    name: Arc<str>,
}

/// Serves `<root>/.pi/ide/<name>.sock`. Each pi keeps one connection,
/// and probes with connects that close at once.
pub fn listener(
    name: String,
    nvim_pid: u32,
    state: Arc<State>,
) -> Listener<KeptSocket, impl FnMut(Accepted) -> Handler + Send + 'static> {
    let source = KeptSocket::new(name, nvim_pid, state.clone());
    Listener {
        name: "socket",
        cap: MAX_CONNECTIONS,
        source,
        handler: move |(stream, name)| Handler {
            stream,
            name,
            state: state.clone(),
        },
    }
}

/// A connection, and the name `hello` gives: the socket's, as pi shows it.
type Accepted = (UnixStream, Arc<str>);

/// The socket file, kept there and following the project root.
pub struct KeptSocket {
    name: String,
    nvim_pid: u32,
    state: Arc<State>,
    root: watch::Receiver<PathBuf>,
    /// What Lua was last told: the path, or why there is none.
    reported: Option<(Option<String>, Option<String>)>,
    bound: Option<Bound>,
    poll: Interval,
}

impl KeptSocket {
    fn new(name: String, nvim_pid: u32, state: Arc<State>) -> Self {
        let mut poll = tokio::time::interval(POLL_INTERVAL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        KeptSocket {
            name,
            nvim_pid,
            root: state.follow_root(),
            state,
            reported: None,
            bound: None,
            poll,
        }
    }

    async fn rebind(&mut self, root: &Path) {
        self.bound = rebind(
            &self.state,
            root,
            &self.name,
            self.nvim_pid,
            &mut self.reported,
        )
        .await;
    }
}

impl Source for KeptSocket {
    type Accepted = Accepted;

    /// Waits for a connection, keeping the socket there meanwhile: bound
    /// again when deleted, moved when the root changes. Cancel-safe: a
    /// bind cut short has created no file yet.
    async fn accept(&mut self) -> std::io::Result<Accepted> {
        loop {
            tokio::select! {
                accepted = accept(&self.bound) => return accepted,
                _ = self.poll.tick() => {
                    if self.bound.as_ref().is_some_and(|b| !b.file.is_there()) {
                        let path = self.bound.as_ref().map_or(Path::new(""), |b| b.file.path());
                        tracing::info!("socket {} was deleted; re-creating it", path.display());
                        self.bound = None;
                    }
                    if self.bound.is_none() {
                        let at = self.root.borrow().clone();
                        self.rebind(&at).await;
                    }
                }
                changed = self.root.changed(), if self.root.has_changed().is_ok() => {
                    if changed.is_err() {
                        continue;
                    }
                    if let Some(old) = self.bound.take() {
                        old.file.remove();
                    }
                    let at = self.root.borrow_and_update().clone();
                    self.rebind(&at).await;
                }
            }
        }
    }

    /// Closed before `hello`: the context socket has no way to say why.
    fn refuse(&self, _: Accepted) {}

    fn stop(self) {
        if let Some(bound) = self.bound {
            bound.file.remove();
        }
    }
}

/// One client of the socket.
pub struct Handler {
    stream: UnixStream,
    name: Arc<str>,
    state: Arc<State>,
}

impl crate::listen::Handler for Handler {
    async fn run(self, shutdown: watch::Receiver<bool>) {
        connection::run(self.stream, self.name, self.state, shutdown).await;
    }
}

async fn accept(bound: &Option<Bound>) -> std::io::Result<Accepted> {
    match bound {
        Some(bound) => {
            let (stream, _) = bound.listener.accept().await?;
            Ok((stream, bound.name.clone()))
        }
        None => std::future::pending().await,
    }
}

/// Binds under `root`; tells Lua where (or why not) when that changed.
async fn rebind(
    state: &State,
    root: &Path,
    name: &str,
    nvim_pid: u32,
    reported: &mut Option<(Option<String>, Option<String>)>,
) -> Option<Bound> {
    let (bound, info) = match file::bind(root, name, nvim_pid).await {
        Ok((listener, file)) => {
            let path = file.path().display().to_string();
            let stem = file.path().file_stem().map(|s| s.to_string_lossy());
            let name = stem.as_deref().unwrap_or(name).into();
            (
                Some(Bound {
                    listener,
                    file,
                    name,
                }),
                (Some(path), None),
            )
        }
        Err(error) => {
            let dir = file::dir(root);
            let why = format!(
                "cannot create pi's context socket in {}: {error}",
                dir.display()
            );
            (None, (None, Some(why)))
        }
    };
    if reported.as_ref() != Some(&info) {
        match &info {
            (Some(path), _) => tracing::info!("context socket {path}"),
            (_, Some(error)) => tracing::warn!("{error}"),
            _ => {}
        }
        *reported = Some(info.clone());
        let (path, error) = info;
        state
            .editor()
            .push(LuaCall::Socket(SocketInfo { path, error }));
    }
    bound
}
