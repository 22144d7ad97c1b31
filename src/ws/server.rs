//! Accepts connections under the cap and gives each its own task; nothing
//! else.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, mpsc, watch};

use super::{MAX_CONNECTIONS, connection, handshake};
use crate::listen::{Admission, Gate, HTTP_BUSY};
use crate::state::State;

/// A client that has not finished its handshake by then is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves until `shutdown` changes. Every connection holds a clone of
/// `done`, so its receiver closes once the last connection has finished.
pub async fn serve(
    listener: TcpListener,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
    done: mpsc::Sender<()>,
) {
    let mut gate = Gate::new("WebSocket", MAX_CONNECTIONS);
    loop {
        tokio::select! {
            admitted = gate.next(|| listener.accept()) => match admitted {
                Admission::Admitted((stream, _), slot) => {
                    crate::task::spawn(handle(stream, slot, state.clone(), shutdown.clone(), done.clone()));
                }
                // The upgrade is HTTP: a client over the cap reads a 503.
                Admission::Refused((stream, _)) => {
                    let _ = stream.try_write(HTTP_BUSY);
                }
            },
            _ = shutdown.changed() => break,
        }
    }
}

async fn handle(
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
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
