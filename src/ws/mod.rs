//! The WebSocket transport pi and Claude Code connect to. It only accepts,
//! authenticates, frames and forwards: what messages mean is [`crate::mcp_ws`]'s
//! business.
//!
//! * [`server`]     – accepts TCP connections on loopback and hands them on.
//! * [`handshake`]  – checks the token before tokio-tungstenite upgrades,
//!   negotiates `mcp`.
//! * [`connection`] – one client's read/write loop, pings, shutdown.
//! * [`frame_timing`] – the host's own time per request, for the bench.

pub mod connection;
mod frame_timing;
pub mod handshake;
pub mod server;

/// Largest message a client may send: a multi-megabyte `openDiff` fits.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Most connections open at once, handshakes included; more are refused
/// with a 503. Agents keep one each.
pub const MAX_CONNECTIONS: usize = 64;
