//! Accepts connections and gives each its own task; nothing else.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

use super::{connection, handshake};
use crate::state::State;

/// A client that has not finished its handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves until `shutdown` changes. Every connection holds a clone of
/// `done`, so its receiver closes once the last connection has finished.
pub async fn serve(
    listener: TcpListener,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
    done: mpsc::Sender<()>,
) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(handle(stream, state.clone(), shutdown.clone(), done.clone()));
                }
                Err(error) => {
                    tracing::warn!("accept failed: {error}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = shutdown.changed() => break,
        }
    }
}

async fn handle(
    stream: TcpStream,
    state: Arc<State>,
    shutdown: watch::Receiver<bool>,
    _done: mpsc::Sender<()>,
) {
    let _ = stream.set_nodelay(true);
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake::accept(stream, &state.token)).await {
        Ok(Ok((ws, kind))) => connection::run(ws, kind, state, shutdown).await,
        // pi probes the port with a bare connect; that ends up here quietly.
        Ok(Err(error)) => tracing::debug!("handshake failed: {error}"),
        Err(_) => tracing::info!("handshake timed out"),
    }
}
