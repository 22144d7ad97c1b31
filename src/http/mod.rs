//! The Streamable-HTTP MCP transport (`http://127.0.0.1:<port>/mcp`): rmcp
//! speaks MCP, hyper serves it; this module only authenticates and
//! forwards to [`crate::mcp_http`].
//!
//! * [`server`]  – accepts connections; checks token, Origin and path
//!   before rmcp sees a request.
//! * [`handler`] – rmcp's `ServerHandler`: `tools/list`, `tools/call`.
//! * [`companion`] – what a Gemini CLI / Qwen Code session adds to it.
//! * [`sessions`] – the sessions of an endpoint: a cap, an idle time that
//!   spares open streams, the count for the person.
//! * [`stream_end`] – a companion session ends with its event stream.
//! * [`token`]   – the token kept across restarts for a fixed port.

pub mod companion;
pub mod handler;
pub mod server;
pub mod sessions;
mod stream_end;
pub mod token;

/// The path the endpoint answers on.
pub const PATH: &str = "/mcp";
