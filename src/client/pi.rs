//! pi's `pi-ide` extension (the WebSocket) and its `ide` extension (the
//! context socket).

use super::{DiagnosticsShape, Profile};

pub const PROFILE: Profile = Profile {
    name: "pi",
    websocket_header: Some("x-pi-ide-authorization"),
    diagnostics: DiagnosticsShape::ByUri,
    discovery: None,
};
