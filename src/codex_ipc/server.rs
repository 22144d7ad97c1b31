//! Accepts on every place bound (see [`super::file`]) under one cap, and
//! gives each connection its own task; removes the sockets it bound when
//! the host stops.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::task::Poll;

use tokio::net::UnixStream;
use tokio::sync::watch;

use super::file::{self, Bound};
use super::{MAX_CONNECTIONS, connection};
use crate::listen::{Listener, Source};
use crate::state::State;

/// Codex's socket(s): `bound` are the places this process listens on,
/// `private_tmpdir` the directory of the private one, cleaned at the end.
pub fn listener(
    bound: Vec<Bound>,
    private_tmpdir: Option<PathBuf>,
    state: Arc<State>,
) -> Listener<Sockets, impl FnMut(UnixStream) -> Handler + Send + 'static> {
    Listener {
        name: "Codex socket",
        cap: MAX_CONNECTIONS,
        source: Sockets {
            bound,
            private_tmpdir,
        },
        handler: move |stream| Handler {
            stream,
            state: state.clone(),
        },
    }
}

pub struct Sockets {
    bound: Vec<Bound>,
    private_tmpdir: Option<PathBuf>,
}

impl Source for Sockets {
    type Accepted = UnixStream;

    /// The next connection on any socket. Cancel-safe: nothing is taken
    /// from a listener until it is returned.
    async fn accept(&mut self) -> io::Result<UnixStream> {
        std::future::poll_fn(|cx| {
            for bound in &self.bound {
                if let Poll::Ready(accepted) = bound.listener.poll_accept(cx) {
                    return Poll::Ready(accepted.map(|(stream, _)| stream));
                }
            }
            Poll::Pending
        })
        .await
    }

    /// Closed at once: the protocol has no way to say why.
    fn refuse(&self, _: UnixStream) {}

    fn stop(self) {
        for bound in &self.bound {
            bound.file.remove();
        }
        if let Some(dir) = &self.private_tmpdir {
            file::remove_if_empty(dir);
        }
    }
}

/// One client of the socket.
pub struct Handler {
    stream: UnixStream,
    state: Arc<State>,
}

impl crate::listen::Handler for Handler {
    async fn run(self, shutdown: watch::Receiver<bool>) {
        let peer = match self.stream.peer_cred() {
            Ok(peer) => peer,
            Err(error) => {
                tracing::info!("Codex socket: no peer credentials ({error}); closed");
                return;
            }
        };
        if peer.uid() != super::uid() {
            tracing::warn!(
                "Codex socket: a process of user {} connected; closed",
                peer.uid()
            );
            return;
        }
        let pid = peer.pid().and_then(|pid| u32::try_from(pid).ok());
        connection::run(self.stream, pid, self.state, shutdown).await;
    }
}
