//! Who is on the other end of a connection: an id for its lifetime, which
//! agent it is ([`ClientKind`]) and what it speaks to us ([`Protocol`]).
//!
//! An agent is one file here holding its [`Profile`] (its name, the header
//! it authenticates with, the diagnostics shape it reads, the discovery
//! file that announces a companion port to it) and one line in
//! [`ClientKind::profile`]; everything else reads the profile.

mod claude;
mod gemini;
mod pi;
mod qwen;

/// Identifies one connection for its lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientId(pub u64);

/// Who asked for what outlives a request (a diff on screen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requester {
    /// A connected client: its diffs close when it disconnects.
    Client(ClientId),
    /// The Streamable-HTTP MCP endpoint. HTTP calls have no connection of
    /// their own, so nothing "disconnects": its diffs end when the person
    /// decides, the call is cancelled or Neovim closes.
    Mcp,
    /// The review of what changed since a baseline (`:PiIde changes`):
    /// the person asked for it, no agent waits on it.
    Changes,
    /// An agent asking over a channel of its own that is no client
    /// connection (Codex's hook, opencode's permission requests), named for
    /// the person; its diffs end as the MCP endpoint's do.
    Agent(&'static str),
}

impl From<ClientId> for Requester {
    fn from(client: ClientId) -> Self {
        Requester::Client(client)
    }
}

/// Which agent is on the other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    Pi,
    Claude,
    Gemini,
    Qwen,
}

/// What a client speaks to us; decides which messages it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// pi's and Claude's JSON-RPC (MCP) over the WebSocket: notifications
    /// like `selection_changed`, diagnostics, diffs.
    IdeWebSocket,
    /// pi's context socket: NDJSON pushes of the context, reviews.
    ContextSocket,
    /// The IDE companion protocol over Streamable-HTTP MCP (Gemini CLI's):
    /// `ide/contextUpdate`, diffs decided by notification.
    Companion,
}

/// What the host knows of one agent.
pub struct Profile {
    /// In logs, in Lua's client list, in the diff's winbar.
    pub name: &'static str,
    /// The handshake header that carries its token, if it connects to the
    /// WebSocket.
    pub websocket_header: Option<&'static str>,
    /// How its `getDiagnostics` answers look.
    pub diagnostics: DiagnosticsShape,
    /// The file that announces a companion port to it, if it speaks the
    /// companion protocol.
    pub discovery: Option<DiscoveryFile>,
}

/// The two shapes of `getDiagnostics` answers agents parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticsShape {
    /// pi's: `{uri: [diagnostic]}`, severity 3 `Information`.
    ByUri,
    /// Claude Code's: `[{uri, diagnostics}]`, severity 3 `Info`.
    UriList,
}

/// Where and how a companion CLI looks for editors.
#[derive(Debug)]
pub struct DiscoveryFile {
    /// The command-line option naming its directory (`--gemini-dir`).
    pub option: &'static str,
    /// The file's name for a Neovim and a port.
    pub name: fn(nvim_pid: u32, port: u16) -> String,
    /// Whether a file name is one of its kind, and the Neovim pid in it
    /// when the name carries one (else the body's `ppid` tells).
    pub pid_in_name: fn(name: &str) -> Option<Option<u32>>,
    /// Whether the body carries Neovim's pid as `ppid`.
    pub ppid: bool,
}

impl ClientKind {
    /// Every agent the host knows.
    pub const ALL: [ClientKind; 4] = [
        ClientKind::Pi,
        ClientKind::Claude,
        ClientKind::Gemini,
        ClientKind::Qwen,
    ];

    pub fn profile(self) -> &'static Profile {
        match self {
            ClientKind::Pi => &pi::PROFILE,
            ClientKind::Claude => &claude::PROFILE,
            ClientKind::Gemini => &gemini::PROFILE,
            ClientKind::Qwen => &qwen::PROFILE,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.profile().name
    }

    /// The agent whose WebSocket handshake header is `name`.
    pub fn for_header(name: &str) -> Option<ClientKind> {
        ClientKind::ALL.into_iter().find(|kind| {
            kind.profile()
                .websocket_header
                .is_some_and(|header| name.eq_ignore_ascii_case(header))
        })
    }
}

impl From<ClientKind> for DiagnosticsShape {
    fn from(kind: ClientKind) -> Self {
        kind.profile().diagnostics
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_has_its_own_name_header_and_discovery_option() {
        let names: Vec<_> = ClientKind::ALL.map(ClientKind::as_str).to_vec();
        assert_eq!(names, ["pi", "claude", "gemini", "qwen"]);
        for kind in ClientKind::ALL {
            if let Some(header) = kind.profile().websocket_header {
                assert_eq!(ClientKind::for_header(&header.to_uppercase()), Some(kind));
            }
        }
        let options: Vec<_> = ClientKind::ALL
            .iter()
            .filter_map(|kind| Some(kind.profile().discovery.as_ref()?.option))
            .collect();
        assert_eq!(options, ["--gemini-dir", "--qwen-dir"]);
    }
}
