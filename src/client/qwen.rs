//! Qwen Code, Gemini CLI's fork, speaking the same companion protocol. It
//! reads `$QWEN_HOME/ide/<PORT>.lock` and deletes locks whose `ppid`
//! (Neovim's live pid) is dead.

use super::{DiagnosticsShape, DiscoveryFile, Profile};

pub const PROFILE: Profile = Profile {
    name: "qwen",
    websocket_header: None,
    diagnostics: DiagnosticsShape::ByUri,
    discovery: Some(DiscoveryFile {
        option: "--qwen-dir",
        name: |_, port| format!("{port}.lock"),
        pid_in_name: |name| name.strip_suffix(".lock").map(|_| None),
        ppid: true,
    }),
};
