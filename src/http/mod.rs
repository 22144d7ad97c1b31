//! The Streamable-HTTP MCP transport (`http://127.0.0.1:<port>/mcp`): rmcp
//! speaks MCP, hyper serves it; this module only authenticates and
//! forwards to [`crate::mcp_tools`].
//!
//! * [`server`]  – accepts connections; checks token, Origin and path
//!   before rmcp sees a request.
//! * [`handler`] – rmcp's `ServerHandler`: `tools/list`, `tools/call`.
//! * [`token`]   – the token kept across restarts for a fixed port.

pub mod handler;
pub mod server;
pub mod token;

/// The path the endpoint answers on.
pub const PATH: &str = "/mcp";
