//! Accepts connections and gives each its own task; nothing else.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::{connection, handshake};
use crate::host::Shared;

/// A client that has not finished its handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

pub async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(handle(stream, shared.clone(), shutdown.clone()));
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

async fn handle(stream: TcpStream, shared: Arc<Shared>, shutdown: watch::Receiver<bool>) {
    let _ = stream.set_nodelay(true);
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake::accept(stream, &shared.token)).await {
        Ok(Ok((ws, kind))) => connection::run(ws, kind, shared, shutdown).await,
        // pi probes the port with a bare connect; that ends up here quietly.
        Ok(Err(error)) => tracing::debug!("handshake failed: {error}"),
        Err(_) => tracing::info!("handshake timed out"),
    }
}
