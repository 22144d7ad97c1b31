//! Who is on the other end of a connection: an id for its lifetime and
//! which agent it is.

/// Identifies one connection for its lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientId(pub u64);

impl ClientId {
    /// Owns the diffs of edits asked for over Streamable-HTTP MCP. HTTP
    /// calls have no connection of their own, so no client with this id is
    /// ever registered (ids start at 1) and none ever "disconnects" it:
    /// those diffs end when the person decides, the call is cancelled or
    /// Neovim closes.
    pub const MCP: ClientId = ClientId(0);
}

/// Which agent is on the other end; decides reply shapes and features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// pi's `pi-ide` extension: diagnostics keyed by uri, suggestions.
    Pi,
    /// Claude Code: diagnostics as an array, no suggestions.
    Claude,
    /// A client of pi's context/review socket: NDJSON, not JSON-RPC; it
    /// gets context pushes and may ask for reviews.
    Socket,
    /// Gemini CLI in IDE mode (the companion protocol over Streamable-HTTP
    /// MCP): `ide/contextUpdate`, diffs decided by notification.
    Gemini,
    /// Qwen Code, Gemini CLI's fork, speaking the same companion protocol.
    Qwen,
}

impl ClientKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Pi => "pi",
            ClientKind::Claude => "claude",
            ClientKind::Socket => "socket",
            ClientKind::Gemini => "gemini",
            ClientKind::Qwen => "qwen",
        }
    }

    /// Whether the client speaks pi's and Claude's JSON-RPC (MCP over the
    /// WebSocket) and so may get notifications like `selection_changed`.
    pub fn speaks_jsonrpc(self) -> bool {
        match self {
            ClientKind::Pi | ClientKind::Claude => true,
            ClientKind::Socket | ClientKind::Gemini | ClientKind::Qwen => false,
        }
    }

    /// Whether the client speaks the IDE companion protocol (Gemini CLI's).
    pub fn is_companion(self) -> bool {
        matches!(self, ClientKind::Gemini | ClientKind::Qwen)
    }
}
