//! The chat's payloads on the seam: what Lua asks of an ACP session
//! ([`ChatOp`]), the person's answer to a permission request, and a
//! terminal's exit. The host's half of the chat is `src/acp/`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;

/// One thing the person (or a config) asks of chat `chat`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ChatOp {
    /// Start agent `agent` (`cmd` is its argv, never a shell string) in
    /// `cwd`; `load`: a session id to resume where the agent offers it.
    Open {
        chat: u64,
        agent: String,
        cmd: Vec<String>,
        #[serde(default, deserialize_with = "super::lua_tables::lua_string_map")]
        env: BTreeMap<String, String>,
        cwd: String,
        #[serde(default)]
        load: Option<String>,
    },
    /// `session/prompt` with these content blocks (built by Lua: text,
    /// resource links, embedded resources).
    Prompt { chat: u64, prompt: Json },
    /// `session/cancel`, and every pending request answered `cancelled`.
    Cancel { chat: u64 },
    /// `session/set_mode`.
    Mode { chat: u64, mode: String },
    /// `session/set_config_option`.
    Config {
        chat: u64,
        option: String,
        value: String,
    },
    /// `authenticate` with the method the person picked.
    Auth { chat: u64, method: String },
    /// The person closed the chat: the agent is stopped.
    Close { chat: u64 },
}

impl ChatOp {
    pub fn chat(&self) -> u64 {
        match self {
            ChatOp::Open { chat, .. }
            | ChatOp::Prompt { chat, .. }
            | ChatOp::Cancel { chat }
            | ChatOp::Mode { chat, .. }
            | ChatOp::Config { chat, .. }
            | ChatOp::Auth { chat, .. }
            | ChatOp::Close { chat } => *chat,
        }
    }
}

/// The person's answer to permission request `id`: one of the agent's
/// option ids, or none (dismissed: `cancelled`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct PermissionAnswer {
    pub id: u64,
    #[serde(default)]
    pub option: Option<String>,
}

/// A terminal an agent created ended.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct TerminalExit {
    pub id: u64,
    #[serde(default)]
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub signal: Option<String>,
}

/// `chat_terminal_output`'s answer: the visible text, cut to its limit.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
pub struct TerminalOutput {
    #[serde(default)]
    pub output: String,
    #[serde(default)]
    pub truncated: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_read_as_lua_sends_them() {
        let open: ChatOp = serde_json::from_value(serde_json::json!({
            "op": "open", "chat": 2, "agent": "gemini", "cmd": ["gemini", "--acp"],
            "env": [], "cwd": "/w"
        }))
        .unwrap();
        assert_eq!(open.chat(), 2);
        let ChatOp::Open { env, load, .. } = open else {
            panic!("not open")
        };
        assert!(
            env.is_empty() && load.is_none(),
            "an empty Lua table is no env"
        );
        let cancel: ChatOp =
            serde_json::from_value(serde_json::json!({"op": "cancel", "chat": 3})).unwrap();
        assert_eq!(cancel, ChatOp::Cancel { chat: 3 });
        assert!(
            serde_json::from_value::<ChatOp>(serde_json::json!({"op": "x", "chat": 1})).is_err()
        );
    }
}
