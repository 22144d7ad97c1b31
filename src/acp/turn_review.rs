//! Where a chat's start meets the turn review (`:PiIde changes`): the
//! review takes a baseline of the project's files when an agent session
//! starts, so it can show what the agent's turns changed. The review is
//! not built yet; this is the one place a session's start calls it.

use crate::state::State;

/// An agent session of chat `chat` started in `root`.
pub fn session_started(_state: &State, chat: u64, root: &str) {
    tracing::debug!("chat {chat}: session started in {root} (no turn review baseline yet)");
}
