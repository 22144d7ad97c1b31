//! One client: `hello` first, then the lines it sends go to
//! [`crate::context_review`] and the messages queued for it go out, one JSON
//! object per line. A client that closes at once (pi's probe) ends here
//! quietly, whatever the write of `hello` met. A line begun must end within
//! [`LINE_TIMEOUT`]; a client that stops reading fills its bounded outbox
//! and is closed.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::watch;
use tokio::time::Instant;

use super::MAX_LINE_BYTES;
use super::lines::{Chunk, Lines};
use crate::client::ClientKind;
use crate::context_review::{self, messages};
use crate::state::State;
use crate::state::outbox::outbox;

/// A line begun must end within this (pi writes each line at once).
pub const LINE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a write may block at shutdown, or the greeting at connect.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

pub async fn run(
    stream: UnixStream,
    name: Arc<str>,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
) {
    let (mut reader, mut writer) = stream.into_split();
    let hello = messages::hello(&name);
    let greeted = tokio::time::timeout(WRITE_TIMEOUT, write_line(&mut writer, &hello)).await;
    if !matches!(greeted, Ok(Ok(()))) {
        tracing::debug!("socket client left before hello");
        return;
    }
    let (outbox, mut messages) = outbox();
    let client = state.client_connected(ClientKind::Socket, outbox);
    tracing::info!("client {} connected (socket)", client.0);
    context_review::connected(&state, client);
    let mut lines = Lines::new(MAX_LINE_BYTES);
    let mut buffer = vec![0; 64 * 1024];
    // When the line being read must have ended.
    let mut line_deadline: Option<Instant> = None;
    // Neovim is closing: what is queued goes out before the connection ends.
    let mut closing = false;
    loop {
        let unfinished_line = async {
            match line_deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            read = reader.read(&mut buffer) => match read {
                Ok(0) => break,
                Ok(n) => {
                    for chunk in lines.feed(&buffer[..n]) {
                        match chunk {
                            Chunk::Line(line) => context_review::receive(&state, client, &line),
                            Chunk::NotUtf8 => tracing::debug!("client {}: a line that is not UTF-8", client.0),
                            Chunk::TooLong => tracing::warn!(
                                "client {}: a line longer than {MAX_LINE_BYTES} bytes, skipped",
                                client.0
                            ),
                        }
                    }
                    line_deadline = match lines.in_progress() {
                        true => line_deadline.or_else(|| Some(Instant::now() + LINE_TIMEOUT)),
                        false => None,
                    };
                }
                Err(error) => {
                    tracing::debug!("client {}: {error}", client.0);
                    break;
                }
            },
            () = unfinished_line => {
                tracing::info!("client {}: a line unfinished after {} s; closing", client.0, LINE_TIMEOUT.as_secs());
                break;
            }
            message = messages.recv() => {
                // None: it fell behind; the log line is written already.
                let Some(message) = message else { break };
                let write = write_line(&mut writer, &message);
                tokio::pin!(write);
                let written = tokio::select! {
                    written = &mut write => written.is_ok(),
                    () = messages.fell_behind() => false,
                    // Neovim is closing: this one, then the rest, go out.
                    _ = shutdown.changed() => {
                        closing = matches!(tokio::time::timeout(WRITE_TIMEOUT, write).await, Ok(Ok(())));
                        false
                    }
                };
                if !written {
                    break;
                }
            }
            _ = shutdown.changed() => {
                closing = true;
                break;
            }
        }
    }
    if closing {
        // Answers queued at shutdown (a cancelled review) go first.
        let flush = async {
            while let Ok(message) = messages.try_recv() {
                if write_line(&mut writer, &message).await.is_err() {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(WRITE_TIMEOUT, flush).await;
    }
    let _ = tokio::time::timeout(WRITE_TIMEOUT, writer.shutdown()).await;
    state.client_gone(client);
    tracing::info!("client {} disconnected", client.0);
}

async fn write_line(writer: &mut OwnedWriteHalf, message: &str) -> std::io::Result<()> {
    let mut line = Vec::with_capacity(message.len() + 1);
    line.extend_from_slice(message.as_bytes());
    line.push(b'\n');
    writer.write_all(&line).await
}
