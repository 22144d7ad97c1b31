//! One client: `hello` first, then the lines it sends go to
//! [`crate::ide_protocol`] and the messages queued for it go out, one JSON
//! object per line. A client that closes at once (pi's probe) ends here
//! quietly, whatever the write of `hello` met.

use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{mpsc, watch};

use super::MAX_LINE_BYTES;
use super::lines::{Chunk, Lines};
use crate::client::ClientKind;
use crate::ide_protocol::{self, messages};
use crate::state::State;

pub async fn run(
    stream: UnixStream,
    name: Arc<str>,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
) {
    let (mut reader, mut writer) = stream.into_split();
    if let Err(error) = write_line(&mut writer, &messages::hello(&name)).await {
        tracing::debug!("socket client left before hello: {error}");
        return;
    }
    let (outbox, mut messages) = mpsc::unbounded_channel::<String>();
    let client = state.client_connected(ClientKind::Socket, outbox);
    tracing::info!("client {} connected (socket)", client.0);
    ide_protocol::connected(&state, client);
    let mut lines = Lines::new(MAX_LINE_BYTES);
    let mut buffer = vec![0; 64 * 1024];
    loop {
        tokio::select! {
            read = reader.read(&mut buffer) => match read {
                Ok(0) => break,
                Ok(n) => {
                    for chunk in lines.feed(&buffer[..n]) {
                        match chunk {
                            Chunk::Line(bytes) => match std::str::from_utf8(&bytes) {
                                Ok(line) => ide_protocol::receive(&state, client, line),
                                Err(_) => tracing::debug!("client {}: a line that is not UTF-8", client.0),
                            },
                            Chunk::TooLong => tracing::warn!(
                                "client {}: a line longer than {MAX_LINE_BYTES} bytes, skipped",
                                client.0
                            ),
                        }
                    }
                }
                Err(error) => {
                    tracing::debug!("client {}: {error}", client.0);
                    break;
                }
            },
            Some(message) = messages.recv() => {
                if write_line(&mut writer, &message).await.is_err() {
                    break;
                }
            }
            _ = shutdown.changed() => {
                // Answers queued at shutdown (a cancelled review) go first.
                while let Ok(message) = messages.try_recv() {
                    if write_line(&mut writer, &message).await.is_err() {
                        break;
                    }
                }
                break;
            }
        }
    }
    let _ = writer.shutdown().await;
    state.client_gone(client);
    tracing::info!("client {} disconnected", client.0);
}

async fn write_line(writer: &mut OwnedWriteHalf, message: &str) -> std::io::Result<()> {
    let mut line = Vec::with_capacity(message.len() + 1);
    line.extend_from_slice(message.as_bytes());
    line.push(b'\n');
    writer.write_all(&line).await
}
