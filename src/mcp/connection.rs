//! One client's connection: frames in, dispatch, replies out. Requests run
//! in tasks of their own, so a diff waiting for the person never blocks the
//! `getDiagnostics` that pi sends before each model call.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use super::dispatch;
use crate::host::{Shared, client_json};
use crate::hub::{ClientId, ClientKind};
use crate::jsonrpc::{self, Incoming};

/// Keeps idle connections alive through proxies and detects dead peers.
const PING_INTERVAL: Duration = Duration::from_secs(30);
/// How long replies still in flight may take once Neovim is closing.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(500);

pub async fn run(
    ws: WebSocketStream<TcpStream>,
    kind: ClientKind,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let (mut sink, mut stream) = ws.split();
    let (outbox, mut replies) = mpsc::unbounded_channel::<String>();
    let client = shared.hub.register(kind, outbox);
    let in_flight = Arc::new(AtomicUsize::new(0));
    tracing::info!("client {} connected ({})", client.0, kind.as_str());
    shared.editor.push(
        "pi-ide.host",
        "_on_client",
        vec![
            serde_json::json!("connected"),
            client_json(client, kind, None),
        ],
    );

    let mut ping =
        tokio::time::interval_at(tokio::time::Instant::now() + PING_INTERVAL, PING_INTERVAL);
    loop {
        tokio::select! {
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(text))) => receive(&shared, client, text.as_str(), &in_flight),
                Some(Ok(Message::Binary(bytes))) => match std::str::from_utf8(&bytes) {
                    Ok(text) => receive(&shared, client, text, &in_flight),
                    Err(_) => {
                        shared.hub.send(client, jsonrpc::error(&serde_json::Value::Null, jsonrpc::PARSE_ERROR, "Parse error: binary frame is not UTF-8"));
                    }
                },
                Some(Ok(Message::Close(_))) | None => break,
                Some(Ok(_)) => {}
                Some(Err(error)) => {
                    tracing::info!("client {}: {error}", client.0);
                    break;
                }
            },
            Some(reply) = replies.recv() => {
                if sink.send(Message::text(reply)).await.is_err() {
                    break;
                }
            }
            _ = ping.tick() => {
                if sink.send(Message::Ping(Default::default())).await.is_err() {
                    break;
                }
            }
            _ = shutdown.changed() => {
                drain(&mut replies, &mut sink, &in_flight).await;
                let _ = sink.send(Message::Close(None)).await;
                break;
            }
        }
    }
    let _ = sink.close().await;
    shared.client_gone(client);
    tracing::info!("client {} disconnected", client.0);
}

/// Classifies one text message and starts whatever it asks for.
fn receive(shared: &Arc<Shared>, client: ClientId, text: &str, in_flight: &Arc<AtomicUsize>) {
    match jsonrpc::parse(text) {
        Ok(Incoming::Request { id, method, params }) => {
            let shared = shared.clone();
            let in_flight = in_flight.clone();
            in_flight.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                dispatch::request(&shared, client, id, &method, params).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
            });
        }
        Ok(Incoming::Notification { method, params }) => {
            dispatch::notification(shared, client, &method, params)
        }
        Ok(Incoming::Response { id, outcome }) => shared.outgoing.resolve(client, &id, outcome),
        Err(rejected) => {
            shared.hub.send(client, rejected.reply);
        }
    }
}

/// Sends replies of requests that finish during shutdown (pending diffs
/// answered `DIFF_REJECTED`), bounded so a stuck task cannot hold Neovim up.
async fn drain<S>(
    replies: &mut mpsc::UnboundedReceiver<String>,
    sink: &mut S,
    in_flight: &AtomicUsize,
) where
    S: SinkExt<Message> + Unpin,
{
    let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
    loop {
        while let Ok(reply) = replies.try_recv() {
            if sink.send(Message::text(reply)).await.is_err() {
                return;
            }
        }
        if in_flight.load(Ordering::SeqCst) == 0 {
            return;
        }
        match tokio::time::timeout_at(deadline, replies.recv()).await {
            Ok(Some(reply)) => {
                if sink.send(Message::text(reply)).await.is_err() {
                    return;
                }
            }
            Ok(None) | Err(_) => return,
        }
    }
}
