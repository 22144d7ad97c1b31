//! Claude Code, over the WebSocket it finds in its own lockfile directory.

use super::{DiagnosticsShape, Profile};

pub const PROFILE: Profile = Profile {
    name: "claude",
    websocket_header: Some("x-claude-code-ide-authorization"),
    diagnostics: DiagnosticsShape::UriList,
    discovery: None,
};
