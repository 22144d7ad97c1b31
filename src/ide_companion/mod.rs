//! The IDE companion protocol Gemini CLI and Qwen Code speak in IDE mode
//! (MCP over Streamable HTTP): the two tools it adds to `/mcp`'s
//! ([`TOOLS`]: `openDiff` answered at once and `closeDiff`), and the
//! notifications it expects, `ide/contextUpdate` ([`context`]) and
//! `ide/diffAccepted`, `ide/diffRejected`, `ide/diffClosed` (sent by the
//! diff tools). Knows nothing about HTTP.

pub mod context;

use crate::tools::{self, Offered};

/// The tools a companion session has besides the endpoint's, listed first.
pub const TOOLS: &[&dyn Offered] = &[
    &tools::open_diff_notified::OpenDiffNotified,
    &tools::close_diff::CloseDiff,
];
