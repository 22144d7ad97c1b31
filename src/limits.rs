//! Every limit a client can meet, gathered from the transports that enforce
//! them (the README lists them with what a client gets at each).

pub use crate::codex_ipc::{
    IDLE_TIMEOUT as CODEX_IDLE_TIMEOUT, MAX_CONNECTIONS as CODEX_MAX_CONNECTIONS,
    MAX_FRAME_BYTES as CODEX_MAX_FRAME_BYTES,
};
pub use crate::http::server::{
    HEADER_TIMEOUT as MCP_HEADER_TIMEOUT, MAX_BODY_BYTES as MCP_MAX_BODY_BYTES,
    MAX_CONNECTIONS as MCP_MAX_CONNECTIONS,
};
pub use crate::http::sessions::{
    DEFAULT_IDLE as MCP_SESSION_IDLE, MAX_SESSIONS as MCP_MAX_SESSIONS,
};
pub use crate::project::edits::MAX_FILES as REVIEW_MAX_FILES;
pub use crate::socket::MAX_CONNECTIONS as SOCKET_MAX_CONNECTIONS;
pub use crate::socket::MAX_LINE_BYTES as SOCKET_MAX_LINE_BYTES;
pub use crate::socket::connection::LINE_TIMEOUT as SOCKET_LINE_TIMEOUT;
pub use crate::state::outbox::{
    MAX_QUEUED as OUTBOX_MAX_MESSAGES, MAX_QUEUED_BYTES as OUTBOX_MAX_BYTES,
};
pub use crate::ws::server::HANDSHAKE_TIMEOUT as WS_HANDSHAKE_TIMEOUT;
pub use crate::ws::{
    MAX_CONNECTIONS as WS_MAX_CONNECTIONS, MAX_MESSAGE_BYTES as WS_MAX_MESSAGE_BYTES,
};
