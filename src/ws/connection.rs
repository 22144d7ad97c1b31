//! One client's connection: frames in, dispatch, replies out. What needs
//! nothing from Neovim (`ping`, `tools/list`, `getDiagnostics` from the
//! mirror) is answered right here on the connection's task; everything
//! else runs in a task of its own, so a diff waiting for the person never
//! blocks the `getDiagnostics` pi sends before each model call. Everything
//! ready after one wake goes out in one write. A client that stops reading
//! fills its bounded outbox and is closed (a write to it that blocks
//! meanwhile is given up).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{FutureExt, SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Bytes, Error, Message};

use super::frame_timing::FrameTimings;
use crate::client::{ClientId, ClientKind, Protocol};
use crate::jsonrpc::{self, Incoming};
use crate::mcp_ws;
use crate::state::State;
use crate::state::outbox::{Empty, OutboxReceiver, outbox};

type Socket = WebSocketStream<TcpStream>;

/// Keeps idle connections alive through proxies and detects dead peers.
const PING_INTERVAL: Duration = Duration::from_secs(30);
/// How long replies still in flight may take once Neovim is closing.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(500);
/// How long closing may wait for a client that does not read.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Why the read loop ended.
enum End {
    /// The client closed, broke the protocol, or the write failed.
    Done,
    /// Neovim is closing: answers still coming go out before the Close frame.
    Closing,
}

/// What the messages read so far leave the connection to do.
enum Flow {
    Open,
    /// The client closed (tungstenite queued the answer) or broke the
    /// protocol: the Close frame carries the RFC's code for what it did.
    Ends(Option<CloseFrame>),
}

/// Everything one connection's messages need to be handled.
struct Handling<'a> {
    state: &'a Arc<State>,
    client: ClientId,
    in_flight: &'a mpsc::Sender<()>,
    timings: &'a mut FrameTimings,
    read_at: Instant,
}

pub async fn run(
    mut ws: Socket,
    kind: ClientKind,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
) {
    let (outbox, mut replies) = outbox();
    let client = state.client_connected(kind, Protocol::IdeWebSocket, outbox);
    if let (Ok(peer), Ok(local)) = (ws.get_ref().peer_addr(), ws.get_ref().local_addr()) {
        state.find_client_pid(client, peer, local);
    }
    // Each request task holds a clone; the receiver closes when the last ends.
    let (in_flight, mut all_done) = mpsc::channel::<()>(1);
    tracing::info!("client {} connected ({})", client.0, kind.as_str());

    let mut timings = FrameTimings::from_env();
    let mut ping =
        tokio::time::interval_at(tokio::time::Instant::now() + PING_INTERVAL, PING_INTERVAL);
    let mut out = Vec::new();
    let end = loop {
        let mut flow = Flow::Open;
        tokio::select! {
            message = ws.next() => {
                let mut handling = Handling {
                    state: &state,
                    client,
                    in_flight: &in_flight,
                    timings: &mut timings,
                    read_at: Instant::now(),
                };
                flow = handling.message(message, &mut out);
                // Every message already read is answered before one write.
                while let Flow::Open = flow
                    && let Some(message) = ws.next().now_or_never()
                {
                    flow = handling.message(message, &mut out);
                }
            },
            reply = replies.recv() => match reply {
                Some(reply) => out.push(Message::text(reply)),
                // It fell behind; the log line is written already.
                None => break End::Done,
            },
            _ = ping.tick() => out.push(Message::Ping(Bytes::new())),
            _ = shutdown.changed() => break End::Closing,
        }
        if !take_replies(&mut replies, &mut out) {
            break End::Done;
        }
        let written = !out.is_empty();
        if let Flow::Ends(Some(close)) = &flow {
            out.push(Message::Close(Some(close.clone())));
        }
        if out
            .iter()
            .any(|m| m.len() > crate::memory::LARGE_TEXT_BYTES)
        {
            crate::memory::release_soon();
        }
        if written || matches!(flow, Flow::Ends(_)) {
            match write(&mut ws, &mut out, &replies, &mut shutdown).await {
                Wrote::Sent => timings.written(),
                Wrote::Failed => break End::Done,
                Wrote::Closing => break End::Closing,
            }
        }
        if let Flow::Ends(_) = flow {
            break End::Done;
        }
        if written {
            // Answers made here run no task of their own: an agent that
            // keeps the socket busy must still let Neovim's events through.
            tokio::task::yield_now().await;
        }
    };
    if let End::Closing = end {
        drop(in_flight);
        let _ =
            tokio::time::timeout(DRAIN_TIMEOUT, drain(&mut replies, &mut ws, &mut all_done)).await;
        let away = CloseFrame {
            code: CloseCode::Away,
            reason: "".into(),
        };
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, ws.send(Message::Close(Some(away)))).await;
    }
    // A client that does not read cannot hold its connection open.
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, ws.close(None)).await;
    state.client_gone(client);
    timings.save();
    tracing::info!("client {} disconnected", client.0);
}

impl Handling<'_> {
    /// Handles one message read (or why none could be), queuing what
    /// answers it in `out`.
    fn message(&mut self, message: Option<Result<Message, Error>>, out: &mut Vec<Message>) -> Flow {
        let client = self.client.0;
        match message {
            Some(Ok(Message::Text(text))) => self.receive(&text, out),
            Some(Ok(Message::Binary(bytes))) => match std::str::from_utf8(&bytes) {
                Ok(text) => self.receive(text, out),
                Err(_) => out.push(Message::text(jsonrpc::error(
                    &jsonrpc::Id::Null,
                    jsonrpc::PARSE_ERROR,
                    "Parse error: binary frame is not UTF-8",
                ))),
            },
            // tungstenite queues the pong and answers a Close by itself.
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
            Some(Ok(Message::Close(_))) | None => return Flow::Ends(None),
            Some(Err(error)) => {
                tracing::info!("client {client}: {error}");
                return Flow::Ends(close_for(&error));
            }
        }
        Flow::Open
    }

    /// Classifies one text message: answers it into `out` when it needs
    /// nothing from Neovim, else starts whatever it asks for.
    fn receive(&mut self, text: &str, out: &mut Vec<Message>) {
        if text.len() > crate::memory::LARGE_TEXT_BYTES {
            crate::memory::release_soon();
        }
        let (state, client) = (self.state, self.client);
        match jsonrpc::parse(text) {
            Ok(Incoming::Request { id, method, params }) => {
                if let Some(reply) = mcp_ws::answer_now(state, client, &id, &method, &params) {
                    out.push(Message::text(reply));
                    self.timings.answered(&method, &params, self.read_at);
                    return;
                }
                let state = state.clone();
                let guard = self.in_flight.clone();
                crate::task::spawn(async move {
                    mcp_ws::request(&state, client, id, &method, params).await;
                    drop(guard);
                });
            }
            Ok(Incoming::Notification { method, params }) => {
                mcp_ws::notification(state, client, &method, params)
            }
            Ok(Incoming::Response { id, outcome }) => {
                state.outgoing().resolve(client, &id, outcome)
            }
            Err(rejected) => out.push(Message::text(rejected.reply)),
        }
    }
}

/// The Close frame RFC 6455 asks for when a client breaks the protocol:
/// 1002 for a bad frame, 1007 for text that is not UTF-8, 1009 for a
/// message over the cap. A broken connection gets none.
fn close_for(error: &Error) -> Option<CloseFrame> {
    let code = match error {
        Error::Protocol(_) => CloseCode::Protocol,
        Error::Utf8(_) => CloseCode::Invalid,
        Error::Capacity(_) => CloseCode::Size,
        _ => return None,
    };
    Some(CloseFrame {
        code,
        reason: "".into(),
    })
}

/// Moves every queued reply into `out`; false once the client fell behind.
fn take_replies(replies: &mut OutboxReceiver, out: &mut Vec<Message>) -> bool {
    loop {
        match replies.try_recv() {
            Ok(reply) => out.push(Message::text(reply)),
            Err(Empty::Waiting) => return true,
            Err(Empty::Behind) => return false,
        }
    }
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

/// Feeds every message in `out` and flushes once.
async fn send_all(ws: &mut Socket, out: &mut Vec<Message>) -> Result<(), Error> {
    for message in out.drain(..) {
        ws.feed(message).await?;
    }
    ws.flush().await
}

async fn write(
    ws: &mut Socket,
    out: &mut Vec<Message>,
    replies: &OutboxReceiver,
    shutdown: &mut watch::Receiver<bool>,
) -> Wrote {
    let send = send_all(ws, out);
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

/// Sends replies of requests that finish during shutdown (pending diffs
/// answered `DIFF_REJECTED`), bounded so a stuck task cannot hold Neovim up.
async fn drain(replies: &mut OutboxReceiver, ws: &mut Socket, all_done: &mut mpsc::Receiver<()>) {
    let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
    let mut requests_running = true;
    let mut out = Vec::new();
    loop {
        take_replies(replies, &mut out);
        if !out.is_empty() && send_all(ws, &mut out).await.is_err() {
            return;
        }
        if !requests_running {
            return;
        }
        tokio::select! {
            reply = replies.recv() => match reply {
                Some(reply) => out.push(Message::text(reply)),
                None => return,
            },
            // Closed: every request task has ended, its reply queued.
            None = all_done.recv() => requests_running = false,
            _ = tokio::time::sleep_until(deadline) => return,
        }
    }
}
