//! Accepts connections under the cap and gives each its own task; nothing
//! else.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::{MAX_CONNECTIONS, connection, handshake};
use crate::listen::HTTP_BUSY;
use crate::state::State;

/// A client that has not finished its handshake by then is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The WebSocket port pi and Claude Code connect to.
pub struct Listener {
    listener: TcpListener,
    state: Arc<State>,
}

impl Listener {
    pub fn new(listener: TcpListener, state: Arc<State>) -> Self {
        Listener { listener, state }
    }
}

impl crate::listen::Listener for Listener {
    type Accepted = TcpStream;
    type Handler = Handler;

    fn name(&self) -> &'static str {
        "WebSocket"
    }

    fn cap(&self) -> usize {
        MAX_CONNECTIONS
    }

    async fn accept(&mut self) -> std::io::Result<TcpStream> {
        Ok(self.listener.accept().await?.0)
    }

    /// The upgrade is HTTP: a client over the cap reads a 503.
    fn refuse(&self, stream: TcpStream) {
        let _ = stream.try_write(HTTP_BUSY);
    }

    fn handler(&self, stream: TcpStream) -> Handler {
        Handler {
            stream,
            state: self.state.clone(),
        }
    }
}

/// One connection: the handshake within its timeout, then the client.
pub struct Handler {
    stream: TcpStream,
    state: Arc<State>,
}

impl crate::listen::Handler for Handler {
    async fn run(self, shutdown: watch::Receiver<bool>) {
        let Handler { stream, state } = self;
        let _ = stream.set_nodelay(true);
        let handshake = handshake::accept(stream, state.token());
        match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
            Ok(Ok((ws, kind))) => connection::run(ws, kind, state, shutdown).await,
            // pi probes the port with a bare connect; that ends up here quietly.
            Ok(Err(error)) => tracing::debug!("handshake failed: {error}"),
            Err(_) => tracing::info!("handshake timed out"),
        }
    }
}
