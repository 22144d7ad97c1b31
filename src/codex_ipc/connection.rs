//! One client of Codex's socket: frames in, each request answered in turn.
//! A frame that is not a request (a broadcast, a response) is skipped, as
//! is one that is not JSON; a frame over the size cap closes the
//! connection (its length cannot be trusted to skip it), as does one that
//! takes more than [`IDLE_TIMEOUT`] to come. A request that waits for the
//! person (a patch to review) ends when the client goes away: its diffs
//! close.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::UnixStream;
use tokio::sync::watch;
use tokio_util::codec::{FramedRead, FramedWrite};

use super::{IDLE_TIMEOUT, MAX_FRAME_BYTES, codec};
use crate::codex;
use crate::state::State;

/// How long one answer may take to write.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `stream`, whose process is `pid` (when known), until it closes,
/// idles or Neovim closes.
pub async fn run(
    stream: UnixStream,
    pid: Option<u32>,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
) {
    codex::context::client_came(&state).await;
    let (reader, writer) = stream.into_split();
    let mut frames = FramedRead::new(reader, codec());
    let mut out = FramedWrite::new(writer, codec());
    loop {
        let frame = tokio::select! {
            frame = tokio::time::timeout(IDLE_TIMEOUT, frames.next()) => frame,
            _ = shutdown.changed() => return,
        };
        let bytes = match frame {
            Err(_) => {
                tracing::debug!(
                    "Codex socket: no request for {} s; closed",
                    IDLE_TIMEOUT.as_secs()
                );
                return;
            }
            Ok(None) => return,
            Ok(Some(Err(error))) => {
                tracing::info!(
                    "Codex socket: a frame over {MAX_FRAME_BYTES} bytes or unreadable ({error}); closed"
                );
                return;
            }
            Ok(Some(Ok(bytes))) => bytes,
        };
        let Some(request) = codex::messages::request(&bytes) else {
            continue;
        };
        let answer = codex::answer(&state, request, pid);
        tokio::pin!(answer);
        let reply = loop {
            tokio::select! {
                reply = &mut answer => break reply,
                next = frames.next() => match next {
                    // One request at a time: Codex and the hook send one.
                    Some(Ok(_)) => tracing::debug!("Codex socket: a frame while answering, skipped"),
                    // Gone: dropping the answer closes what it showed.
                    _ => return,
                },
            }
        };
        let sent = tokio::time::timeout(WRITE_TIMEOUT, out.send(reply)).await;
        if !matches!(sent, Ok(Ok(()))) {
            return;
        }
    }
}
