//! One client's connection: frames in, dispatch, replies out. Requests run
//! in tasks of their own, so a diff waiting for the person never blocks the
//! `getDiagnostics` that pi sends before each model call. A client that
//! stops reading fills its bounded outbox and is closed (a write to it
//! that blocks meanwhile is given up).

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use crate::claude_ide;
use crate::client::{ClientId, ClientKind};
use crate::jsonrpc::{self, Incoming};
use crate::state::State;
use crate::state::outbox::{OutboxReceiver, outbox};

/// Keeps idle connections alive through proxies and detects dead peers.
const PING_INTERVAL: Duration = Duration::from_secs(30);
/// How long replies still in flight may take once Neovim is closing.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(500);
/// How long closing may wait for a client that does not read.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

pub async fn run(
    ws: WebSocketStream<TcpStream>,
    kind: ClientKind,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
) {
    let addresses = (ws.get_ref().peer_addr(), ws.get_ref().local_addr());
    let (mut sink, mut stream) = ws.split();
    let (outbox, mut replies) = outbox();
    let client = state.client_connected(kind, outbox);
    if let (Ok(peer), Ok(local)) = addresses {
        state.find_client_pid(client, peer, local);
    }
    // Each request task holds a clone; the receiver closes when the last ends.
    let (in_flight, mut all_done) = mpsc::channel::<()>(1);
    tracing::info!("client {} connected ({})", client.0, kind.as_str());

    let mut ping =
        tokio::time::interval_at(tokio::time::Instant::now() + PING_INTERVAL, PING_INTERVAL);
    // Neovim is closing: answers still coming go out before the Close frame.
    let mut closing = false;
    loop {
        let wrote = tokio::select! {
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(text))) => { receive(&state, client, text.as_str(), &in_flight); continue }
                Some(Ok(Message::Binary(bytes))) => {
                    match std::str::from_utf8(&bytes) {
                        Ok(text) => receive(&state, client, text, &in_flight),
                        Err(_) => {
                            state.clients.send(client, jsonrpc::error(&serde_json::Value::Null, jsonrpc::PARSE_ERROR, "Parse error: binary frame is not UTF-8"));
                        }
                    }
                    continue;
                }
                Some(Ok(Message::Close(_))) | None => break,
                Some(Ok(_)) => continue,
                Some(Err(error)) => {
                    tracing::info!("client {}: {error}", client.0);
                    break;
                }
            },
            reply = replies.recv() => match reply {
                Some(reply) => write(&mut sink, Message::text(reply), &replies, &mut shutdown).await,
                // It fell behind; the log line is written already.
                None => break,
            },
            _ = ping.tick() => write(&mut sink, Message::Ping(Default::default()), &replies, &mut shutdown).await,
            _ = shutdown.changed() => Wrote::Closing,
        };
        match wrote {
            Wrote::Sent => {}
            Wrote::Failed => break,
            Wrote::Closing => {
                closing = true;
                break;
            }
        }
    }
    if closing {
        drop(in_flight);
        let _ = tokio::time::timeout(DRAIN_TIMEOUT, drain(&mut replies, &mut sink, &mut all_done))
            .await;
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.send(Message::Close(None))).await;
    }
    // A client that does not read cannot hold its connection open.
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.close()).await;
    state.client_gone(client);
    tracing::info!("client {} disconnected", client.0);
}

/// How a write ended.
enum Wrote {
    Sent,
    /// The connection is done for: the write failed, or the client fell
    /// behind while it blocked.
    Failed,
    /// Neovim is closing (the write was given a moment to finish).
    Closing,
}

async fn write<S>(
    sink: &mut S,
    message: Message,
    replies: &OutboxReceiver,
    shutdown: &mut watch::Receiver<bool>,
) -> Wrote
where
    S: SinkExt<Message> + Unpin,
{
    let send = sink.send(message);
    tokio::pin!(send);
    tokio::select! {
        sent = &mut send => match sent {
            Ok(()) => Wrote::Sent,
            Err(_) => Wrote::Failed,
        },
        () = replies.fell_behind() => Wrote::Failed,
        _ = shutdown.changed() => match tokio::time::timeout(CLOSE_TIMEOUT, send).await {
            Ok(Ok(())) => Wrote::Closing,
            _ => Wrote::Failed,
        },
    }
}

/// Classifies one text message and starts whatever it asks for.
fn receive(state: &Arc<State>, client: ClientId, text: &str, in_flight: &mpsc::Sender<()>) {
    match jsonrpc::parse(text) {
        Ok(Incoming::Request { id, method, params }) => {
            let state = state.clone();
            let guard = in_flight.clone();
            crate::task::spawn(async move {
                claude_ide::request(&state, client, id, &method, params).await;
                drop(guard);
            });
        }
        Ok(Incoming::Notification { method, params }) => {
            claude_ide::notification(state, client, &method, &params)
        }
        Ok(Incoming::Response { id, outcome }) => state.outgoing.resolve(client, &id, outcome),
        Err(rejected) => {
            state.clients.send(client, rejected.reply);
        }
    }
}

/// Sends replies of requests that finish during shutdown (pending diffs
/// answered `DIFF_REJECTED`), bounded so a stuck task cannot hold Neovim up.
async fn drain<S>(replies: &mut OutboxReceiver, sink: &mut S, all_done: &mut mpsc::Receiver<()>)
where
    S: SinkExt<Message> + Unpin,
{
    let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
    let mut requests_running = true;
    loop {
        while let Ok(reply) = replies.try_recv() {
            if sink.send(Message::text(reply)).await.is_err() {
                return;
            }
        }
        if !requests_running {
            return;
        }
        tokio::select! {
            reply = replies.recv() => match reply {
                Some(reply) => {
                    if sink.send(Message::text(reply)).await.is_err() {
                        return;
                    }
                }
                None => return,
            },
            // Closed: every request task has ended, its reply queued.
            None = all_done.recv() => requests_running = false,
            _ = tokio::time::sleep_until(deadline) => return,
        }
    }
}
