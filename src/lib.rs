//! pi-ide host: the Rust half of pi-ide.nvim.
//!
//! Neovim starts this binary as an RPC job. It serves agents (pi's `pi-ide`
//! extension, Claude Code) over an authenticated loopback WebSocket and turns
//! their requests into editor actions that the Lua glue renders.
//!
//! Module map:
//! * [`config`]    – the command line Neovim starts the host with.
//! * [`logging`]   – tracing to a file; stdout is the RPC channel.
//! * [`locking`]   – mutex locking that survives a panicked task.
//! * [`lockfile`]  – the discovery files agents read: write, update, remove, stale GC.
//! * [`auth`]      – secret tokens, constant-time checks, which header means which client.
//! * [`jsonrpc`]   – JSON-RPC 2.0 classification and reply builders (no I/O).
//! * [`hub`]       – connected clients and their outboxes; knows nothing about sockets.
//! * [`diffs`]     – pending `openDiff` requests waiting for the person.
//! * [`hunks`]     – line diffs of large files, so Neovim need not compute them.
//! * [`selection`] – cursor/selection positions → `selection_changed` params.
//! * [`outline`]   – tree-sitter outline, scope and comment detection off the UI thread.
//! * [`suggest`]   – `getSuggestions` requests to pi, cancellation, model listing.
//! * [`outgoing`]  – requests the editor sends to agents and their answers.
//! * [`tools`]     – one file per MCP tool plus the registry behind `tools/list`.
//! * [`mcp`]       – the WebSocket transport: accept, handshake, connection loop, dispatch.
//! * [`nvim`]      – the msgpack-RPC seam: notifications from Lua, calls into Lua.
//! * [`host`]      – wiring, the editor event loop and shutdown.

pub mod auth;
pub mod config;
pub mod diffs;
pub mod host;
pub mod hub;
pub mod hunks;
pub mod jsonrpc;
pub mod lockfile;
pub mod locking;
pub mod logging;
pub mod mcp;
pub mod nvim;
pub mod outgoing;
pub mod outline;
pub mod selection;
pub mod suggest;
pub mod tools;

/// Version of the Lua ⇄ host seam. The Lua glue refuses a host that reports
/// another number, so a stale binary is caught with a clear message.
pub const SEAM_VERSION: u64 = 1;
