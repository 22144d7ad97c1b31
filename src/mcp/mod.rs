//! The WebSocket transport agents connect to.
//!
//! * [`server`]     – accepts TCP connections on loopback and hands them on.
//! * [`handshake`]  – checks the token before the upgrade, negotiates `mcp`.
//! * [`connection`] – one client's read/write loop, pings, shutdown.
//! * [`dispatch`]   – MCP methods (`initialize`, `tools/list`, `tools/call`, …).

pub mod connection;
pub mod dispatch;
pub mod handshake;
pub mod server;

/// Largest message a client may send: a multi-megabyte `openDiff` fits.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;
