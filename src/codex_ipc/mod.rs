//! Codex CLI's IDE channel: the Unix socket its `/ide` asks the editor's
//! context on before each prompt, `$TMPDIR/codex-ipc/ipc-<uid>.sock`
//! (after `$CODEX_HOME/ipc/ipc.sock`, which Codex's desktop app holds).
//! Frames are a 4-byte little-endian length and a JSON message; what they
//! mean is [`crate::codex`]'s business. Only the user's own processes get
//! in: the directory is 0700, the socket 0600, and a peer running as
//! another user is dropped at once.
//!
//! * [`file`]       – the two places served: a private one (the `TMPDIR`
//!   `:PiIde agent codex` gives Codex) and the shared one, when free.
//! * [`server`]     – accepting on both, the peer's user checked.
//! * [`connection`] – one client: frames in, answers out.
//! * [`hook`]       – `pi-ide codex-hook`: Codex's `PreToolUse` hook on
//!   `apply_patch`, a client of the same socket.

pub mod connection;
pub mod file;
pub mod hook;
pub mod server;

use std::time::Duration;

/// Connections open at once; more are closed at once.
pub const MAX_CONNECTIONS: usize = 32;
/// The largest frame a client may send (a patch to review is the largest);
/// a longer one closes its connection.
pub const MAX_FRAME_BYTES: usize = 16 << 20;
/// A connection that sends no whole frame for this long is closed (Codex
/// asks at once and hangs up).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// The user this process runs as: the only one served.
pub fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// 4-byte little-endian length, then that many bytes: Codex's framing.
pub fn codec() -> tokio_util::codec::LengthDelimitedCodec {
    tokio_util::codec::LengthDelimitedCodec::builder()
        .little_endian()
        .length_field_length(4)
        .max_frame_length(MAX_FRAME_BYTES)
        .new_codec()
}
