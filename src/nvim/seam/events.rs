//! [`EditorEvent`]: every notification Lua sends the host, parsed.

use nvim_rs::Value;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::diagnostics::BufferDiagnostics;
use crate::diff::live::{Edit, Side};
use crate::nvim::convert::to_json;
use crate::selection::Positions;

use super::lua_tables::list;
use super::*;

/// One trigger from `lua/pi-ide/suggest/`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct SuggestRequest {
    /// Lua's sequence number: identifies the request in both directions.
    pub token: u64,
    pub buf: i64,
    /// 0-based row and byte column of the cursor.
    pub row: usize,
    pub col: usize,
    pub filetype: String,
    pub path: String,
    /// Cursor windows (~20 lines before, ~10 after) read by Lua.
    pub before: String,
    pub after: String,
    pub count: u32,
    pub model: Option<String>,
    /// From Neovim's own parser, for filetypes the host has no grammar for.
    pub outline: Option<String>,
    pub scope: Option<String>,
    pub in_comment: Option<bool>,
}

/// A file (and lines) the person sends to Claude Code's input box; the
/// `at_mentioned` params as they go on the wire (0-based lines).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Mention {
    pub file_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_start: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_end: Option<u32>,
}

/// The person's decision on a diff.
#[derive(Debug, PartialEq)]
pub struct Decision {
    pub id: u64,
    /// The proposal's final text when accepted; `None` when rejected.
    pub accepted: Option<String>,
    /// Why the person rejected it, when they said (for agents that pass
    /// it on: Codex's hook, opencode).
    pub reason: Option<String>,
}

/// What Neovim told the host, in the order it happened.
#[derive(Debug)]
pub enum EditorEvent {
    Selection(Positions),
    /// The current window shows no file.
    NoFile,
    DiffDecided(Decision),
    /// The person closed diff `id` without deciding.
    DiffClosed(u64),
    Cwd {
        dir: String,
        /// The git root of `dir`, else `dir`.
        root: String,
    },
    Suggest(SuggestRequest),
    SuggestCancel(u64),
    ListModels,
    Stop,
    DiagnosticsPending,
    Diagnostics(Vec<BufferDiagnostics>),
    Mention(Mention),
    DiffEdited(Edit),
    ReviewDone(ReviewDone),
    LspAnswer(LspAnswer),
    /// The answer to a registered tool's call or a run (same shape).
    ToolAnswer(LspAnswer),
    /// The tools the config registered, all of them.
    ToolsChanged(Vec<UserToolSpec>),
    /// A Lua tool proposes an edit.
    ProposeEdit(ProposedEdit),
    /// The project roots may have changed.
    RootsChanged,
    /// Every file to follow on disk: loaded buffers', diffs'.
    WatchFiles(Vec<String>),
    /// Neovim wrote this file itself.
    FileWritten(String),
    /// Take a baseline of the project's files.
    ChangesStart(ChangesStart),
    /// Review what changed since the baseline.
    ChangesReview(ChangesReview),
    /// The person (or a config) asks something of a chat.
    Chat(ChatOp),
    /// The person answered an agent's permission request.
    ChatPermission(PermissionAnswer),
    /// A terminal an agent created ended.
    ChatTerminalExit(TerminalExit),
    /// An opencode agent terminal's server, to follow.
    OpencodeFollow(OpencodeServer),
    /// That opencode (by agent id) exited.
    OpencodeForget(u64),
    /// Text for an opencode's prompt.
    OpencodePrompt(OpencodePrompt),
}

/// Where an opencode started by `:PiIde agent opencode` serves.
#[derive(Deserialize, PartialEq)]
pub struct OpencodeServer {
    /// The agent's id in Lua.
    pub id: u64,
    pub port: u16,
    /// Its server's basic-auth password (never logged).
    pub password: String,
    /// Its working directory.
    pub cwd: String,
    /// Its process (the follower stops when it is gone).
    #[serde(default)]
    pub pid: Option<u32>,
}

impl std::fmt::Debug for OpencodeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpencodeServer")
            .field("id", &self.id)
            .field("port", &self.port)
            .field("cwd", &self.cwd)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// `:PiIde ask` into opencode agent `id`.
#[derive(Debug, Deserialize, PartialEq)]
pub struct OpencodePrompt {
    pub id: u64,
    pub text: String,
    /// Submit it (the text ended with a newline).
    pub submit: bool,
}

impl EditorEvent {
    /// Every event's name, as `lua/pi-ide/seam.lua` lists them.
    pub const NAMES: &[&str] = &[
        "selection",
        "diff_decided",
        "diff_closed",
        "cwd",
        "suggest",
        "suggest_cancel",
        "list_models",
        "stop",
        "diagnostics_pending",
        "diagnostics",
        "mention",
        "diff_edited",
        "no_file",
        "review_done",
        "lsp_answer",
        "roots_changed",
        "watch_files",
        "file_written",
        "tool_answer",
        "tools_changed",
        "propose_edit",
        "changes_start",
        "changes_review",
        "chat",
        "chat_permission",
        "chat_terminal_exit",
        "opencode_follow",
        "opencode_forget",
        "opencode_prompt",
    ];

    /// Parses one notification; `None` for anything malformed.
    pub fn parse(name: &str, args: &[Value]) -> Option<EditorEvent> {
        let payload = || args.first().map(to_json);
        match name {
            "selection" => typed(payload()?).map(EditorEvent::Selection),
            "diff_decided" => {
                let id = args.first()?.as_u64()?;
                let (accepted, reason) = match args.get(1)?.as_bool()? {
                    true => (Some(args.get(2)?.as_str()?.to_owned()), None),
                    false => {
                        let reason = args.get(2).and_then(Value::as_str).map(str::trim);
                        (None, reason.filter(|r| !r.is_empty()).map(str::to_owned))
                    }
                };
                Some(EditorEvent::DiffDecided(Decision {
                    id,
                    accepted,
                    reason,
                }))
            }
            "diff_closed" => Some(EditorEvent::DiffClosed(args.first()?.as_u64()?)),
            "cwd" => {
                let dir = args.first()?.as_str()?.to_owned();
                let root = match args.get(1) {
                    Some(root) => root.as_str()?.to_owned(),
                    None => dir.clone(),
                };
                Some(EditorEvent::Cwd { dir, root })
            }
            "no_file" => Some(EditorEvent::NoFile),
            "roots_changed" => Some(EditorEvent::RootsChanged),
            "watch_files" => typed(list(payload()?)).map(EditorEvent::WatchFiles),
            "file_written" => Some(EditorEvent::FileWritten(args.first()?.as_str()?.to_owned())),
            "review_done" => typed(payload()?).map(EditorEvent::ReviewDone),
            "lsp_answer" => typed(payload()?).map(EditorEvent::LspAnswer),
            "tool_answer" => typed(payload()?).map(EditorEvent::ToolAnswer),
            "tools_changed" => typed(list(payload()?)).map(EditorEvent::ToolsChanged),
            "propose_edit" => typed(payload()?).map(EditorEvent::ProposeEdit),
            "changes_start" => typed(payload()?).map(EditorEvent::ChangesStart),
            "changes_review" => typed(payload()?).map(EditorEvent::ChangesReview),
            "chat" => typed(payload()?).map(EditorEvent::Chat),
            "chat_permission" => typed(payload()?).map(EditorEvent::ChatPermission),
            "chat_terminal_exit" => typed(payload()?).map(EditorEvent::ChatTerminalExit),
            "opencode_follow" => typed(payload()?).map(EditorEvent::OpencodeFollow),
            "opencode_forget" => Some(EditorEvent::OpencodeForget(args.first()?.as_u64()?)),
            "opencode_prompt" => typed(payload()?).map(EditorEvent::OpencodePrompt),
            "suggest" => typed(payload()?).map(EditorEvent::Suggest),
            "suggest_cancel" => Some(EditorEvent::SuggestCancel(args.first()?.as_u64()?)),
            "list_models" => Some(EditorEvent::ListModels),
            "mention" => typed(payload()?).map(EditorEvent::Mention),
            "stop" => Some(EditorEvent::Stop),
            "diagnostics_pending" => Some(EditorEvent::DiagnosticsPending),
            "diagnostics" => typed(list(payload()?)).map(EditorEvent::Diagnostics),
            "diff_edited" => {
                let number = |at: usize| args.get(at)?.as_u64();
                let side = match args.get(2)?.as_str()? {
                    "original" => Side::Original,
                    "proposed" => Side::Proposed,
                    _ => return None,
                };
                let lines = match args.get(5)? {
                    Value::Array(lines) => lines
                        .iter()
                        .map(|l| l.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()?,
                    // Lua sends an empty list as an empty map.
                    Value::Map(map) if map.is_empty() => vec![],
                    _ => return None,
                };
                Some(EditorEvent::DiffEdited(Edit {
                    id: number(0)?,
                    seq: number(1)?,
                    side,
                    first: number(3)? as usize,
                    last: number(4)? as usize,
                    lines,
                }))
            }
            _ => None,
        }
    }
}

fn typed<T: serde::de::DeserializeOwned>(payload: Json) -> Option<T> {
    serde_json::from_value(payload).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nvim::seam::map;

    #[test]
    fn parses_the_events() {
        let accepted = EditorEvent::parse(
            "diff_decided",
            &[Value::from(3), Value::from(true), Value::from("text\n")],
        );
        assert!(
            matches!(accepted, Some(EditorEvent::DiffDecided(Decision { id: 3, accepted: Some(t), reason: None })) if t == "text\n")
        );
        let rejected = EditorEvent::parse("diff_decided", &[Value::from(4), Value::from(false)]);
        assert!(matches!(
            rejected,
            Some(EditorEvent::DiffDecided(Decision {
                id: 4,
                accepted: None,
                reason: None
            }))
        ));
        let said_why = EditorEvent::parse(
            "diff_decided",
            &[
                Value::from(4),
                Value::from(false),
                Value::from(" too long "),
            ],
        );
        assert!(
            matches!(said_why, Some(EditorEvent::DiffDecided(Decision { reason: Some(r), .. })) if r == "too long")
        );
        let blank = EditorEvent::parse(
            "diff_decided",
            &[Value::from(4), Value::from(false), Value::from("  ")],
        );
        assert!(matches!(
            blank,
            Some(EditorEvent::DiffDecided(Decision { reason: None, .. }))
        ));
        assert!(matches!(
            EditorEvent::parse("diff_closed", &[Value::from(5)]),
            Some(EditorEvent::DiffClosed(5))
        ));
        assert!(
            matches!(EditorEvent::parse("cwd", &[Value::from("/w/sub"), Value::from("/w")]), Some(EditorEvent::Cwd { dir, root }) if dir == "/w/sub" && root == "/w")
        );
        assert!(
            matches!(EditorEvent::parse("cwd", &[Value::from("/w")]), Some(EditorEvent::Cwd { root, .. }) if root == "/w"),
            "without a root, the cwd is the root"
        );
        let positions = map(vec![
            ("buf", Value::from(1)),
            ("path", Value::from("/w/a")),
            ("mode", Value::from("cursor")),
            ("start", Value::Array(vec![Value::from(0), Value::from(2)])),
            ("end", Value::Array(vec![Value::from(0), Value::from(2)])),
        ]);
        assert!(matches!(
            EditorEvent::parse("selection", &[positions]),
            Some(EditorEvent::Selection(_))
        ));
        let files = Value::Array(vec![map(vec![
            ("buf", Value::from(2)),
            ("uri", Value::from("file:///w/a.rs")),
            ("diagnostics", Value::Array(vec![])),
        ])]);
        assert!(
            matches!(EditorEvent::parse("diagnostics", &[files]), Some(EditorEvent::Diagnostics(f)) if f.len() == 1)
        );
        assert!(
            matches!(EditorEvent::parse("diagnostics", &[Value::Map(vec![])]), Some(EditorEvent::Diagnostics(f)) if f.is_empty())
        );
        let edited = EditorEvent::parse(
            "diff_edited",
            &[
                Value::from(4),
                Value::from(7),
                Value::from("proposed"),
                Value::from(10),
                Value::from(12),
                Value::Array(vec![Value::from("x")]),
            ],
        );
        assert!(matches!(
            edited,
            Some(EditorEvent::DiffEdited(Edit { id: 4, seq: 7, side: Side::Proposed, first: 10, last: 12, ref lines })) if lines == &["x"]
        ));
        let deleted = EditorEvent::parse(
            "diff_edited",
            &[
                Value::from(4),
                Value::from(8),
                Value::from("original"),
                Value::from(0),
                Value::from(1),
                Value::Map(vec![]),
            ],
        );
        assert!(
            matches!(deleted, Some(EditorEvent::DiffEdited(Edit { side: Side::Original, ref lines, .. })) if lines.is_empty())
        );
        for name in EditorEvent::NAMES {
            let parsed = EditorEvent::parse(name, &[]);
            let needs_args = !matches!(
                *name,
                "list_models" | "stop" | "diagnostics_pending" | "no_file" | "roots_changed"
            );
            assert_eq!(parsed.is_none(), needs_args, "{name}");
        }
    }

    #[test]
    fn a_review_result_reads_lua_tables() {
        let comment = map(vec![
            ("file", Value::from("src/a.rs")),
            ("line", Value::from(3)),
            ("endLine", Value::from(4)),
            ("text", Value::from("why?")),
            (
                "context",
                Value::Array(vec![Value::from("> 3: a"), Value::from("> 4: b")]),
            ),
        ]);
        let done = map(vec![
            ("id", Value::from(2)),
            ("status", Value::from("submitted")),
            ("comments", Value::Array(vec![comment])),
        ]);
        let Some(EditorEvent::ReviewDone(done)) = EditorEvent::parse("review_done", &[done]) else {
            panic!("not parsed");
        };
        assert_eq!(done.id, 2);
        assert_eq!(done.status, ReviewStatus::Submitted);
        assert_eq!(
            serde_json::to_value(&done.comments).unwrap(),
            serde_json::json!([{"file": "src/a.rs", "line": 3, "endLine": 4, "text": "why?", "context": ["> 3: a", "> 4: b"]}])
        );
        let cancelled = map(vec![
            ("id", Value::from(3)),
            ("status", Value::from("cancelled")),
            ("comments", Value::Map(vec![])),
        ]);
        let Some(EditorEvent::ReviewDone(cancelled)) =
            EditorEvent::parse("review_done", &[cancelled])
        else {
            panic!("an empty Lua table is an empty list");
        };
        assert!(cancelled.comments.is_empty());
        let bad = map(vec![
            ("id", Value::from(3)),
            ("status", Value::from("maybe")),
        ]);
        assert!(EditorEvent::parse("review_done", &[bad]).is_none());
    }

    #[test]
    fn malformed_events_are_dropped() {
        for (name, args) in [
            ("diff_decided", vec![Value::from("x")]),
            ("diff_decided", vec![Value::from(1), Value::from(true)]),
            ("diff_closed", vec![]),
            ("selection", vec![Value::from(1)]),
            ("diagnostics", vec![Value::from("x")]),
            ("cwd", vec![]),
            (
                "diff_edited",
                vec![
                    Value::from(1),
                    Value::from(1),
                    Value::from("left"),
                    Value::from(0),
                    Value::from(0),
                    Value::Array(vec![]),
                ],
            ),
            ("bogus", vec![]),
        ] {
            assert!(EditorEvent::parse(name, &args).is_none(), "{name}");
        }
    }
}
