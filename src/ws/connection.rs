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

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

use super::MAX_MESSAGE_BYTES;
use super::frame::{self, Decoder, Event, OP_PING, OP_PONG, OP_TEXT};
use super::frame_timing::FrameTimings;
use super::handshake::Upgraded;
use crate::claude_ide;
use crate::client::ClientId;
use crate::jsonrpc::{self, Incoming};
use crate::state::State;
use crate::state::outbox::{Empty, OutboxReceiver, outbox};

/// Keeps idle connections alive through proxies and detects dead peers.
const PING_INTERVAL: Duration = Duration::from_secs(30);
/// How long replies still in flight may take once Neovim is closing.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(500);
/// How long closing may wait for a client that does not read.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);
/// Room kept for reads; buffers grown past `KEEP_BYTES` by a large message
/// are given back once it is handled, so an idle agent holds little.
const READ_CHUNK: usize = 16 * 1024;
const KEEP_BYTES: usize = 64 * 1024;

/// What the connection's own buffers hold.
struct Buffers {
    /// Bytes read; frames are cut from `start` on.
    read: Vec<u8>,
    start: usize,
    /// Frames to write at the end of this wake.
    out: Vec<u8>,
}

impl Buffers {
    /// Drops what was consumed, and memory a large message left behind.
    fn settle(&mut self) {
        if self.start > 0 {
            self.read.drain(..self.start);
            self.start = 0;
        }
        let large = self.read.capacity() > KEEP_BYTES || self.out.capacity() > KEEP_BYTES;
        if self.read.capacity() > KEEP_BYTES && self.read.len() <= READ_CHUNK {
            self.read.shrink_to(READ_CHUNK);
        }
        if self.out.capacity() > KEEP_BYTES && self.out.is_empty() {
            self.out = Vec::new();
        }
        if large && self.read.capacity() <= KEEP_BYTES && self.out.capacity() <= KEEP_BYTES {
            crate::memory::release_soon();
        }
    }
}

/// Why the read loop ended.
enum End {
    /// The client closed, broke the protocol, or the write failed.
    Done,
    /// Neovim is closing: answers still coming go out before the Close frame.
    Closing,
}

pub async fn run(
    mut stream: TcpStream,
    upgraded: Upgraded,
    state: Arc<State>,
    mut shutdown: watch::Receiver<bool>,
) {
    let kind = upgraded.kind;
    let (outbox, mut replies) = outbox();
    let client = state.client_connected(kind, outbox);
    if let (Ok(peer), Ok(local)) = (stream.peer_addr(), stream.local_addr()) {
        state.find_client_pid(client, peer, local);
    }
    // Each request task holds a clone; the receiver closes when the last ends.
    let (in_flight, mut all_done) = mpsc::channel::<()>(1);
    tracing::info!("client {} connected ({})", client.0, kind.as_str());

    let mut buffers = Buffers {
        read: upgraded.early,
        start: 0,
        out: Vec::new(),
    };
    let mut decoder = Decoder::new(MAX_MESSAGE_BYTES);
    let mut timings = FrameTimings::from_env();
    let mut ping =
        tokio::time::interval_at(tokio::time::Instant::now() + PING_INTERVAL, PING_INTERVAL);
    let mut read_at = Instant::now();
    let end = loop {
        let finished = handle_frames(
            &state,
            client,
            &mut decoder,
            &mut buffers,
            &in_flight,
            &mut timings,
            read_at,
        );
        buffers.settle();
        if !take_replies(&mut replies, &mut buffers.out) {
            break End::Done;
        }
        if !buffers.out.is_empty() {
            match write(&mut stream, &buffers.out, &replies, &mut shutdown).await {
                Wrote::Sent => timings.written(),
                Wrote::Failed => break End::Done,
                Wrote::Closing => break End::Closing,
            }
            buffers.out.clear();
            buffers.settle();
            // Answers made here run no task of their own: an agent that
            // keeps the socket busy must still let Neovim's events through.
            tokio::task::yield_now().await;
        }
        if finished {
            break End::Done;
        }
        if buffers.read.capacity() - buffers.read.len() < READ_CHUNK / 4 {
            buffers.read.reserve(READ_CHUNK);
        }
        tokio::select! {
            read = stream.read_buf(&mut buffers.read) => match read {
                Ok(0) => break End::Done,
                Ok(_) => read_at = Instant::now(),
                Err(error) => {
                    tracing::info!("client {}: {error}", client.0);
                    break End::Done;
                }
            },
            reply = replies.recv() => match reply {
                Some(reply) => frame::encode(&mut buffers.out, OP_TEXT, reply.as_bytes()),
                // It fell behind; the log line is written already.
                None => break End::Done,
            },
            _ = ping.tick() => frame::encode(&mut buffers.out, OP_PING, &[]),
            _ = shutdown.changed() => break End::Closing,
        }
    };
    if let End::Closing = end {
        drop(in_flight);
        let _ = tokio::time::timeout(
            DRAIN_TIMEOUT,
            drain(&mut replies, &mut stream, &mut all_done),
        )
        .await;
        let mut close = Vec::new();
        frame::encode_close(&mut close, 1001);
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, stream.write_all(&close)).await;
    }
    // A client that does not read cannot hold its connection open.
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, stream.shutdown()).await;
    state.client_gone(client);
    timings.save();
    tracing::info!("client {} disconnected", client.0);
}

/// Handles every whole frame read so far; true once the connection is to
/// end (the client closed, or broke the protocol: the Close frame is queued).
fn handle_frames(
    state: &Arc<State>,
    client: ClientId,
    decoder: &mut Decoder,
    buffers: &mut Buffers,
    in_flight: &mpsc::Sender<()>,
    timings: &mut FrameTimings,
    read_at: Instant,
) -> bool {
    loop {
        let event = match decoder.next(&mut buffers.read, &mut buffers.start) {
            Ok(Some(event)) => event,
            Ok(None) => return false,
            Err(violation) => {
                tracing::info!("client {}: {violation}", client.0);
                frame::encode_close(&mut buffers.out, violation.close_code());
                return true;
            }
        };
        match event {
            Event::Text(text) => receive(
                state,
                client,
                &text,
                &mut buffers.out,
                in_flight,
                timings,
                read_at,
            ),
            Event::Binary(bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) => receive(
                    state,
                    client,
                    text,
                    &mut buffers.out,
                    in_flight,
                    timings,
                    read_at,
                ),
                Err(_) => {
                    let reply = jsonrpc::error(
                        &serde_json::Value::Null,
                        jsonrpc::PARSE_ERROR,
                        "Parse error: binary frame is not UTF-8",
                    );
                    frame::encode(&mut buffers.out, OP_TEXT, reply.as_bytes());
                }
            },
            Event::Ping(payload) => frame::encode(&mut buffers.out, OP_PONG, &payload),
            Event::Pong => {}
            Event::Close(_) => {
                frame::encode_close(&mut buffers.out, 1000);
                return true;
            }
        }
    }
}

/// Moves every queued reply into `out`; false once the client fell behind.
fn take_replies(replies: &mut OutboxReceiver, out: &mut Vec<u8>) -> bool {
    loop {
        match replies.try_recv() {
            Ok(reply) => frame::encode(out, OP_TEXT, reply.as_bytes()),
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

async fn write(
    stream: &mut TcpStream,
    bytes: &[u8],
    replies: &OutboxReceiver,
    shutdown: &mut watch::Receiver<bool>,
) -> Wrote {
    let send = stream.write_all(bytes);
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

/// Classifies one text message: answers it into `out` when it needs
/// nothing from Neovim, else starts whatever it asks for.
fn receive(
    state: &Arc<State>,
    client: ClientId,
    text: &str,
    out: &mut Vec<u8>,
    in_flight: &mpsc::Sender<()>,
    timings: &mut FrameTimings,
    read_at: Instant,
) {
    match jsonrpc::parse(text) {
        Ok(Incoming::Request { id, method, params }) => {
            if let Some(reply) = claude_ide::answer_now(state, client, &id, &method, &params) {
                frame::encode(out, OP_TEXT, reply.as_bytes());
                timings.answered(&method, &params, read_at);
                return;
            }
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
        Err(rejected) => frame::encode(out, OP_TEXT, rejected.reply.as_bytes()),
    }
}

/// Sends replies of requests that finish during shutdown (pending diffs
/// answered `DIFF_REJECTED`), bounded so a stuck task cannot hold Neovim up.
async fn drain(
    replies: &mut OutboxReceiver,
    stream: &mut TcpStream,
    all_done: &mut mpsc::Receiver<()>,
) {
    let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
    let mut requests_running = true;
    let mut out = Vec::new();
    loop {
        take_replies(replies, &mut out);
        if !out.is_empty() {
            if stream.write_all(&out).await.is_err() {
                return;
            }
            out.clear();
        }
        if !requests_running {
            return;
        }
        tokio::select! {
            reply = replies.recv() => match reply {
                Some(reply) => frame::encode(&mut out, OP_TEXT, reply.as_bytes()),
                None => return,
            },
            // Closed: every request task has ended, its reply queued.
            None = all_done.recv() => requests_running = false,
            _ = tokio::time::sleep_until(deadline) => return,
        }
    }
}
