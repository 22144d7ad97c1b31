//! Who is on the other end of a connection: an id for its lifetime and
//! which agent it is.

/// Identifies one connection for its lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientId(pub u64);

/// Which agent is on the other end; decides reply shapes and features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// pi's `pi-ide` extension: diagnostics keyed by uri, suggestions.
    Pi,
    /// Claude Code: diagnostics as an array, no suggestions.
    Claude,
}

impl ClientKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Pi => "pi",
            ClientKind::Claude => "claude",
        }
    }
}
