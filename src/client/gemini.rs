//! Gemini CLI in IDE mode. It reads every
//! `<tmpdir>/gemini/ide/gemini-ide-server-<PID>-<PORT>.json` and keeps
//! those whose workspace holds its cwd.

use super::{DiagnosticsShape, DiscoveryFile, Profile};

pub const PROFILE: Profile = Profile {
    name: "gemini",
    websocket_header: None,
    // Companion clients never ask; they would get pi's shape.
    diagnostics: DiagnosticsShape::ByUri,
    discovery: Some(DiscoveryFile {
        option: "--gemini-dir",
        name: |nvim_pid, port| format!("gemini-ide-server-{nvim_pid}-{port}.json"),
        pid_in_name,
        ppid: false,
    }),
};

/// The pid in `gemini-ide-server-<PID>-<PORT>.json`.
fn pid_in_name(name: &str) -> Option<Option<u32>> {
    let rest = name
        .strip_prefix("gemini-ide-server-")?
        .strip_suffix(".json")?;
    let (pid, port) = rest.split_once('-')?;
    port.parse::<u16>().ok()?;
    Some(Some(pid.parse().ok()?))
}
