//! Keeps the socket there and accepts on it: re-created within a poll
//! interval when deleted (pi deletes sockets that do not accept), moved when
//! the project root changes (`:cd`), removed when the host stops. Lua hears
//! where it is (`socket`), for `:PiIde status` and its own clean-up.

use std::path::Path;
use std::sync::Arc;

use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, watch};

use super::file::{self, SocketFile};
use super::{MAX_CONNECTIONS, POLL_INTERVAL, connection};
use crate::listen::{Admission, Gate};
use crate::nvim::seam::{LuaCall, SocketInfo};
use crate::state::State;

struct Bound {
    listener: UnixListener,
    file: SocketFile,
    /// The file's name without `.sock`: `nvim`, or `nvim-<pid>`.
    name: Arc<str>,
}

/// Serves `<root>/.pi/ide/<name>.sock` until `shutdown` changes. Like every
/// connection, holds a clone of `done` until its socket file is removed.
pub async fn serve(
    name: String,
    nvim_pid: u32,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
    done: mpsc::Sender<()>,
) {
    let mut root = state.root.subscribe();
    let mut reported = None;
    let mut bound = None;
    let mut poll = tokio::time::interval(POLL_INTERVAL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut gate = Gate::new("socket", MAX_CONNECTIONS);
    loop {
        tokio::select! {
            admitted = gate.next(|| accept(&bound)) => match admitted {
                Admission::Admitted((stream, name), slot) => {
                    let connection = connection::run(stream, name, state.clone(), shutdown.clone());
                    let done = done.clone();
                    crate::task::spawn(async move {
                        connection.await;
                        drop((slot, done));
                    });
                }
                // Closed before `hello`: the context/review protocol has
                // no way to say why.
                Admission::Refused(_) => {}
            },
            _ = poll.tick() => {
                if bound.as_ref().is_some_and(|b: &Bound| !b.file.is_there()) {
                    tracing::info!("socket {} was deleted; re-creating it", bound.as_ref().map_or(Path::new(""), |b| b.file.path()).display());
                    bound = None;
                }
                if bound.is_none() {
                    let at = root.borrow().clone();
                    bound = rebind(&state, &at, &name, nvim_pid, &mut reported).await;
                }
            }
            changed = root.changed() => {
                if changed.is_err() {
                    break;
                }
                if let Some(old) = bound.take() {
                    old.file.remove();
                }
                let at = root.borrow_and_update().clone();
                bound = rebind(&state, &at, &name, nvim_pid, &mut reported).await;
            }
            _ = shutdown.changed() => break,
        }
    }
    if let Some(bound) = bound {
        bound.file.remove();
    }
}

/// A connection, and the name `hello` gives: the socket's, as pi shows it.
async fn accept(bound: &Option<Bound>) -> std::io::Result<(UnixStream, Arc<str>)> {
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
            .editor
            .push(LuaCall::Socket(SocketInfo { path, error }));
    }
    bound
}
