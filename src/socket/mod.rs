//! The context/review socket pi's `ide` extension connects to:
//! `<project root>/.pi/ide/<name>.sock`, newline-delimited JSON. It only
//! binds, accepts, frames and forwards: what the lines mean is
//! [`crate::context_review`]'s business.
//!
//! * [`file`]       – the socket file: its place, modes, name, liveness.
//! * [`server`]     – accepts, re-creates a deleted socket, follows `:cd`.
//! * [`connection`] – one client: `hello`, lines in, messages out.
//! * [`lines`]      – splitting bytes into lines, with a length cap
//!   (tokio-util's `LinesCodec`).

pub mod connection;
pub mod file;
pub mod lines;
pub mod server;

use std::time::Duration;

/// Longest line a client may send; a longer one is skipped, the
/// connection kept.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Most clients connected at once; more are closed before `hello`. Each pi
/// keeps one, and probes with connects that close at once.
pub const MAX_CONNECTIONS: usize = 32;

/// How often the server checks its socket file is still there (pi deletes
/// sockets that do not accept).
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);
