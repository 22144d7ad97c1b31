//! Accepts connections under the cap and gives each its own task; nothing
//! else.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::{MAX_CONNECTIONS, connection, handshake};
use crate::listen::{HttpPort, Listener};
use crate::state::State;

/// A client that has not finished its handshake by then is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// The WebSocket port pi and Claude Code connect to: a client over the
/// cap reads a 503 (the upgrade is HTTP).
pub fn listener(
    port: TcpListener,
    state: Arc<State>,
) -> Listener<HttpPort, impl FnMut(TcpStream) -> Handler + Send + 'static> {
    Listener {
        name: "WebSocket",
        cap: MAX_CONNECTIONS,
        source: HttpPort(port),
        handler: move |stream| Handler {
            stream,
            state: state.clone(),
        },
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
