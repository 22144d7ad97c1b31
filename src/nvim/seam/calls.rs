//! [`LuaCall`]: every Lua function the host calls, and how its
//! arguments reach Lua.

use nvim_rs::Value;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::diff::hunks::Hunk;
use crate::diff::parts::HunkPart;
use crate::diff::prepare::DiffView;
use crate::file_watch::Changes;
use crate::nvim::convert::from_json;

use super::*;

/// A call into Lua.
#[derive(Debug)]
pub enum LuaCall {
    Started(Started),
    Client(ClientEvent, ClientInfo),
    OpenDiff(Box<DiffView>),
    CloseDiff {
        id: u64,
        /// Why, for the person: "the agent disconnected", a newer diff, …
        reason: Option<String>,
        /// The agent took the proposal as the person left it, their edits
        /// included: Lua keeps no copy of them.
        taken: bool,
    },
    Positions,
    /// The proposal of open diff `id` as the person left it (companion `closeDiff`).
    DiffText {
        id: u64,
    },
    Suggestions {
        token: u64,
        outcome: Result<Vec<String>, String>,
    },
    Models(Result<Json, Json>),
    /// New hunks of large diff `id` after Lua's edit `seq`.
    DiffHunks {
        id: u64,
        seq: u64,
        hunks: Vec<Hunk>,
        words: Vec<u32>,
    },
    /// One part of large diff `id`'s content (see [`crate::diff::parts`]),
    /// or, with `kind` `done`, the end of them.
    DiffPart {
        id: u64,
        kind: &'static str,
        /// `first, lines` of a side, or `first, hunks, words`.
        payload: Vec<Value>,
    },
    Workspace,
    ProjectRoots,
    CurrentPositions,
    /// Rows `first..=last` of `buf`, at most `max_bytes` of text in all.
    SelectedRows {
        buf: i64,
        first: u32,
        last: u32,
        max_bytes: u32,
    },
    OpenFile(OpenFile),
    OpenEditors,
    DocumentState {
        path: String,
    },
    SaveDocument {
        path: String,
        /// Where `path` led when checked: Lua writes only while it still does.
        real: String,
    },
    BufferText {
        path: String,
    },
    LspRequest(LspQuery),
    ModifiedBuffers,
    BufferLines(Vec<BufferRows>),
    LspEdit(LspEditQuery),
    ApplyEdit(ApplyEdit),
    EditNotice(EditNotice),
    Socket(SocketInfo),
    ReviewOpen(Review),
    ReviewClose {
        id: u64,
        /// Why, for the person.
        reason: String,
    },
    ReviewRefused {
        message: String,
    },
    /// An agent's request was refused (a path out of the project): tell
    /// the person why.
    Refused {
        message: String,
    },
    /// Watched files changed on disk (or went away).
    FilesChanged(Changes),
    /// A registered Lua tool is called.
    UserTool(UserToolCall),
    /// What became of a Lua tool's proposed edit `id`.
    EditDecided {
        id: u64,
        result: Json,
    },
    /// What Neovim can run for the project; answered by `tool_answer`.
    RunConfigurations {
        id: u64,
    },
    /// Run something once the person agrees; answered by `tool_answer`.
    RunCommand(RunRequest),
    /// The files review `id` of the changes shows.
    ChangesListed {
        id: u64,
        listing: Json,
    },
    /// What became of changes request `id` (a baseline, a review).
    ChangesDone {
        id: u64,
        result: Json,
    },
    /// How many MCP sessions an endpoint (`MCP`, or a companion CLI's
    /// name) has open now.
    Sessions {
        endpoint: String,
        open: usize,
    },
    /// What happened in chat `chat` since the last call (at most one a
    /// frame): message chunks, tool calls, the plan, its status.
    ChatUpdate {
        chat: u64,
        updates: Vec<Json>,
    },
    /// An agent asks the person's permission: `{id, chat, tool_call,
    /// options}`; answered by the `chat_permission` event.
    ChatPermission(Json),
    /// An agent runs a command: `{id, chat, command, args, env, cwd,
    /// limit}` in a terminal buffer; its exit comes as `chat_terminal_exit`.
    ChatTerminal(Json),
    /// The visible output of terminal `id`, cut to its limit.
    ChatTerminalOutput {
        id: u64,
    },
    /// Stops terminal `id`'s command; `release`: the agent is done with it.
    ChatTerminalKill {
        id: u64,
        release: bool,
    },
}

impl LuaCall {
    /// Every call's name, as `lua/pi-ide/seam.lua` lists them.
    pub const NAMES: &[&str] = &[
        "started",
        "client",
        "open_diff",
        "close_diff",
        "positions",
        "suggestions",
        "models",
        "diff_hunks",
        "diff_part",
        "workspace",
        "project_roots",
        "current_positions",
        "selected_rows",
        "open_file",
        "open_editors",
        "document_state",
        "save_document",
        "buffer_text",
        "lsp_request",
        "modified_buffers",
        "buffer_lines",
        "lsp_edit",
        "apply_edit",
        "edit_notice",
        "socket",
        "review_open",
        "review_close",
        "review_refused",
        "refused",
        "files_changed",
        "user_tool",
        "edit_decided",
        "changes_listed",
        "changes_done",
        "run_configurations",
        "run_command",
        "diff_text",
        "sessions",
        "chat_update",
        "chat_permission",
        "chat_terminal",
        "chat_terminal_output",
        "chat_terminal_kill",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            LuaCall::Started(_) => "started",
            LuaCall::Client(..) => "client",
            LuaCall::OpenDiff(_) => "open_diff",
            LuaCall::CloseDiff { .. } => "close_diff",
            LuaCall::Positions => "positions",
            LuaCall::Suggestions { .. } => "suggestions",
            LuaCall::Models(_) => "models",
            LuaCall::DiffHunks { .. } => "diff_hunks",
            LuaCall::DiffPart { .. } => "diff_part",
            LuaCall::Workspace => "workspace",
            LuaCall::ProjectRoots => "project_roots",
            LuaCall::CurrentPositions => "current_positions",
            LuaCall::SelectedRows { .. } => "selected_rows",
            LuaCall::OpenFile(_) => "open_file",
            LuaCall::OpenEditors => "open_editors",
            LuaCall::DocumentState { .. } => "document_state",
            LuaCall::SaveDocument { .. } => "save_document",
            LuaCall::BufferText { .. } => "buffer_text",
            LuaCall::LspRequest(_) => "lsp_request",
            LuaCall::ModifiedBuffers => "modified_buffers",
            LuaCall::BufferLines(_) => "buffer_lines",
            LuaCall::LspEdit(_) => "lsp_edit",
            LuaCall::ApplyEdit(_) => "apply_edit",
            LuaCall::EditNotice(_) => "edit_notice",
            LuaCall::Socket(_) => "socket",
            LuaCall::ReviewOpen(_) => "review_open",
            LuaCall::ReviewClose { .. } => "review_close",
            LuaCall::ReviewRefused { .. } => "review_refused",
            LuaCall::Refused { .. } => "refused",
            LuaCall::FilesChanged(_) => "files_changed",
            LuaCall::UserTool(_) => "user_tool",
            LuaCall::EditDecided { .. } => "edit_decided",
            LuaCall::ChangesListed { .. } => "changes_listed",
            LuaCall::ChangesDone { .. } => "changes_done",
            LuaCall::RunConfigurations { .. } => "run_configurations",
            LuaCall::RunCommand(_) => "run_command",
            LuaCall::DiffText { .. } => "diff_text",
            LuaCall::Sessions { .. } => "sessions",
            LuaCall::ChatUpdate { .. } => "chat_update",
            LuaCall::ChatPermission(_) => "chat_permission",
            LuaCall::ChatTerminal(_) => "chat_terminal",
            LuaCall::ChatTerminalOutput { .. } => "chat_terminal_output",
            LuaCall::ChatTerminalKill { .. } => "chat_terminal_kill",
        }
    }

    /// The arguments of `seam.call`: the name, then the payload.
    pub fn into_args(self) -> Result<Vec<Value>, String> {
        let mut args = vec![Value::from(self.name())];
        let payload = match self {
            LuaCall::Started(info) => vec![msgpack(&info)?],
            LuaCall::Client(event, client) => vec![Value::from(event.as_str()), msgpack(&client)?],
            LuaCall::OpenDiff(view) => vec![diff_view::diff_view(*view)?],
            LuaCall::CloseDiff { id, reason, taken } => vec![
                Value::from(id),
                reason.map_or(Value::Nil, Value::from),
                Value::from(taken),
            ],
            LuaCall::Positions => vec![],
            LuaCall::Suggestions { token, outcome } => match outcome {
                Ok(list) => vec![Value::from(token), msgpack(&list)?, Value::Nil],
                Err(error) => vec![Value::from(token), Value::Nil, Value::from(error)],
            },
            LuaCall::Models(Ok(result)) => vec![from_json(&result), Value::Nil],
            LuaCall::Models(Err(error)) => vec![Value::Nil, from_json(&error)],
            LuaCall::DiffHunks {
                id,
                seq,
                hunks,
                words,
            } => vec![
                Value::from(id),
                Value::from(seq),
                msgpack(&hunks)?,
                msgpack(&words)?,
            ],
            LuaCall::DiffPart { id, kind, payload } => {
                let mut args = vec![Value::from(id), Value::from(kind)];
                args.extend(payload);
                args
            }
            LuaCall::Workspace
            | LuaCall::ProjectRoots
            | LuaCall::CurrentPositions
            | LuaCall::OpenEditors
            | LuaCall::ModifiedBuffers => vec![],
            LuaCall::BufferLines(wanted) => vec![msgpack(&wanted)?],
            LuaCall::SelectedRows {
                buf,
                first,
                last,
                max_bytes,
            } => vec![
                Value::from(buf),
                Value::from(first),
                Value::from(last),
                Value::from(max_bytes),
            ],
            LuaCall::OpenFile(request) => vec![msgpack(&request)?],
            LuaCall::LspRequest(query) => vec![msgpack(&query)?],
            LuaCall::LspEdit(query) => vec![msgpack(&query)?],
            LuaCall::ApplyEdit(edit) => vec![msgpack(&edit)?],
            LuaCall::EditNotice(notice) => vec![msgpack(&notice)?],
            LuaCall::DocumentState { path } | LuaCall::BufferText { path } => {
                vec![Value::from(path)]
            }
            LuaCall::SaveDocument { path, real } => vec![Value::from(path), Value::from(real)],
            LuaCall::Socket(SocketInfo { path, error }) => vec![
                path.map_or(Value::Nil, Value::from),
                error.map_or(Value::Nil, Value::from),
            ],
            LuaCall::ReviewOpen(review) => vec![msgpack(&review)?],
            LuaCall::ReviewClose { id, reason } => vec![Value::from(id), Value::from(reason)],
            LuaCall::ReviewRefused { message } | LuaCall::Refused { message } => {
                vec![Value::from(message)]
            }
            LuaCall::UserTool(call) => vec![msgpack(&call)?],
            LuaCall::EditDecided { id, result } | LuaCall::ChangesDone { id, result } => {
                vec![Value::from(id), from_json(&result)]
            }
            LuaCall::ChangesListed { id, listing } => vec![Value::from(id), from_json(&listing)],
            LuaCall::RunConfigurations { id } | LuaCall::DiffText { id } => vec![Value::from(id)],
            LuaCall::RunCommand(request) => vec![msgpack(&request)?],
            LuaCall::ChatUpdate { chat, updates } => {
                let updates = updates.iter().map(from_json).collect();
                vec![Value::from(chat), Value::Array(updates)]
            }
            LuaCall::ChatPermission(request) | LuaCall::ChatTerminal(request) => {
                vec![from_json(&request)]
            }
            LuaCall::ChatTerminalOutput { id } => vec![Value::from(id)],
            LuaCall::ChatTerminalKill { id, release } => {
                vec![Value::from(id), Value::from(release)]
            }
            LuaCall::FilesChanged(changes) => {
                vec![msgpack(&changes.changed)?, msgpack(&changes.gone)?]
            }
            LuaCall::Sessions { endpoint, open } => {
                vec![Value::from(endpoint), Value::from(open as u64)]
            }
        };
        args.extend(payload);
        Ok(args)
    }
}

impl LuaCall {
    /// Hunk part `part` of large diff `id`, copied into msgpack values.
    pub fn diff_part(id: u64, part: &HunkPart<'_>) -> LuaCall {
        let hunks = part.hunks.iter().map(|h| {
            let row = [h.old_start, h.old_len, h.new_start, h.new_len];
            Value::Array(row.map(Value::from).to_vec())
        });
        let payload = vec![
            Value::from(part.first),
            Value::Array(hunks.collect()),
            Value::Array(part.words.iter().map(|&w| Value::from(w)).collect()),
        ];
        LuaCall::DiffPart {
            id,
            kind: "hunks",
            payload,
        }
    }

    /// Large diff `id` has all its parts.
    pub fn diff_parts_done(id: u64) -> LuaCall {
        LuaCall::DiffPart {
            id,
            kind: "done",
            payload: vec![],
        }
    }
}

/// Structs become maps with named keys, as Lua reads them (`rmpv`'s own
/// serializer writes structs as arrays).
fn msgpack<T: Serialize>(payload: &T) -> Result<Value, String> {
    serde_json::to_value(payload)
        .map(|json| from_json(&json))
        .map_err(|e| e.to_string())
}

/// `project_roots`: where this Neovim's project is.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ProjectRoots {
    /// Neovim's global cwd.
    pub cwd: String,
    /// Workspace folders of its language servers (absolute paths).
    #[serde(default)]
    pub folders: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nvim::convert::to_json;

    #[test]
    fn every_call_is_named_in_the_list() {
        let calls = [
            LuaCall::Started(Started {
                version: "0",
                seam: SEAM_VERSION,
                port: 1,
                lockfile: "/l".into(),
                claude_lockfile: None,
                claude_error: None,
                pid: 2,
                mcp_url: None,
                mcp_error: None,
                mcp_token_file: None,
                mcp_token_warning: None,
                languages: vec!["rust"],
                companions: vec![],
                companion_error: None,
                codex: None,
                codex_error: None,
            }),
            LuaCall::Client(
                ClientEvent::Connected,
                ClientInfo {
                    id: 1,
                    kind: "pi",
                    name: None,
                    pid: None,
                },
            ),
            LuaCall::CloseDiff {
                id: 3,
                reason: Some("the agent disconnected".into()),
                taken: false,
            },
            LuaCall::Positions,
            LuaCall::DiffText { id: 3 },
            LuaCall::Suggestions {
                token: 4,
                outcome: Err("no".into()),
            },
            LuaCall::Models(Ok(serde_json::json!({"models": []}))),
            LuaCall::DiffHunks {
                id: 1,
                seq: 2,
                hunks: vec![],
                words: vec![],
            },
            LuaCall::diff_parts_done(1),
            LuaCall::Workspace,
            LuaCall::ProjectRoots,
            LuaCall::CurrentPositions,
            LuaCall::SelectedRows {
                buf: 1,
                first: 0,
                last: 3,
                max_bytes: 100,
            },
            LuaCall::OpenFile(OpenFile {
                path: "/w/a".into(),
                start_text: None,
                end_text: None,
                select_to_end_of_line: false,
                frontmost: true,
                line: None,
                column: None,
            }),
            LuaCall::OpenEditors,
            LuaCall::DocumentState {
                path: "/w/a".into(),
            },
            LuaCall::SaveDocument {
                path: "/w/a".into(),
                real: "/w/a".into(),
            },
            LuaCall::BufferText {
                path: "/w/a".into(),
            },
            LuaCall::LspRequest(LspQuery {
                id: 1,
                kind: "hover",
                path: "/w/a.py".into(),
                line: 0,
                character: 4,
                text: None,
                timeout_ms: 5000,
                ..Default::default()
            }),
            LuaCall::ModifiedBuffers,
            LuaCall::BufferLines(vec![BufferRows {
                buf: 1,
                rows: vec![0, 4],
            }]),
            LuaCall::LspEdit(LspEditQuery {
                id: 2,
                kind: "rename",
                path: "/w/a.py".into(),
                new_name: Some("b".into()),
                ..Default::default()
            }),
            LuaCall::ApplyEdit(ApplyEdit {
                path: "/w/a".into(),
                real: "/w/a".into(),
                lines: vec!["x".into()],
                eol: true,
                crlf: false,
                expected: ExpectedText {
                    lines: vec![],
                    eol: true,
                    crlf: false,
                    exists: false,
                },
                write: true,
                probe: false,
            }),
            LuaCall::EditNotice(EditNotice {
                path: "/w/a".into(),
                why: "changed".into(),
                kept: Some(crate::diff::text::Lines::split("x\n")),
            }),
            LuaCall::Socket(SocketInfo::default()),
            LuaCall::ReviewOpen(Review {
                id: 1,
                root: "/w".into(),
                files: vec!["a".into()],
                heads: [("a".to_owned(), vec!["x".to_owned()])].into(),
            }),
            LuaCall::ReviewClose {
                id: 1,
                reason: "the agent disconnected".into(),
            },
            LuaCall::ReviewRefused {
                message: "no".into(),
            },
            LuaCall::Refused {
                message: "no".into(),
            },
            LuaCall::ChangesListed {
                id: 1,
                listing: serde_json::json!({"files": []}),
            },
            LuaCall::ChangesDone {
                id: 1,
                result: serde_json::json!({"ok": true}),
            },
            LuaCall::Sessions {
                endpoint: "MCP".into(),
                open: 3,
            },
            LuaCall::ChatUpdate {
                chat: 1,
                updates: vec![serde_json::json!({"kind": "text", "text": "hi"})],
            },
            LuaCall::ChatPermission(serde_json::json!({"id": 1})),
            LuaCall::ChatTerminal(serde_json::json!({"id": 1})),
            LuaCall::ChatTerminalOutput { id: 1 },
            LuaCall::ChatTerminalKill {
                id: 1,
                release: true,
            },
        ];
        for call in calls {
            let name = call.name();
            assert!(LuaCall::NAMES.contains(&name), "{name}");
            let args = call.into_args().unwrap();
            assert_eq!(args[0].as_str(), Some(name));
        }
    }

    #[test]
    fn payloads_are_msgpack_maps_and_strings() {
        let args = LuaCall::Client(
            ClientEvent::Initialized,
            ClientInfo {
                id: 7,
                kind: "claude",
                name: Some("claude-code".into()),
                pid: Some(4242),
            },
        )
        .into_args()
        .unwrap();
        assert_eq!(args[1].as_str(), Some("initialized"));
        assert_eq!(
            to_json(&args[2]),
            serde_json::json!({"id": 7, "kind": "claude", "name": "claude-code", "pid": 4242})
        );
        let args = LuaCall::Suggestions {
            token: 9,
            outcome: Ok(vec!["a".into()]),
        }
        .into_args()
        .unwrap();
        assert_eq!(to_json(&args[2]), serde_json::json!(["a"]));
        assert!(args[3].is_nil());
        let query = LuaCall::LspEdit(LspEditQuery {
            id: 3,
            kind: "apply_action",
            action_id: Some("7".into()),
            timeout_ms: 100,
            ..Default::default()
        })
        .into_args()
        .unwrap();
        assert_eq!(
            to_json(&query[1]),
            serde_json::json!({"id": 3, "kind": "apply_action", "path": "", "action_id": "7", "timeout_ms": 100}),
            "absent positions are absent, not nil"
        );
    }

    #[test]
    fn a_diff_view_reaches_lua_as_one_flat_map() {
        use crate::diff::hunks::Hunk;
        use crate::diff::prepare::Prepared;
        use crate::diff::text::Lines;
        let view = DiffView {
            id: 5,
            tab_name: "t".into(),
            path: "/w/a".into(),
            original_path: "/w/a".into(),
            client: "pi",
            client_id: Some(3),
            sides: Prepared {
                original: Lines::split("a\r\n"),
                original_exists: true,
                proposed: Lines::split("b"),
                parts: true,
                content: None,
            },
            edit: None,
        };
        let args = LuaCall::OpenDiff(Box::new(view)).into_args().unwrap();
        assert_eq!(
            to_json(&args[1]),
            serde_json::json!({
                "id": 5, "tab_name": "t", "path": "/w/a", "original_path": "/w/a",
                "client": "pi", "client_id": 3, "original_exists": true,
                "original": {"lines": ["a"], "eol": true, "crlf": true},
                "proposed": {"lines": ["b"], "eol": false, "crlf": false},
                "parts": true,
            })
        );
        let rediffed = LuaCall::DiffHunks {
            id: 5,
            seq: 3,
            hunks: vec![Hunk {
                old_start: 2,
                old_len: 0,
                new_start: 2,
                new_len: 1,
            }],
            words: vec![],
        };
        let args = rediffed.into_args().unwrap();
        assert_eq!(
            args.iter().skip(1).map(to_json).collect::<Vec<_>>(),
            [
                serde_json::json!(5),
                serde_json::json!(3),
                serde_json::json!([[2, 0, 2, 1]]),
                serde_json::json!([])
            ]
        );
        let started = LuaCall::Started(Started {
            version: "1",
            seam: SEAM_VERSION,
            port: 9,
            lockfile: "/l/9.lock".into(),
            claude_lockfile: Some("/c/9.lock".into()),
            claude_error: None,
            pid: 3,
            mcp_url: Some("http://127.0.0.1:7/mcp".into()),
            mcp_error: None,
            mcp_token_file: Some("/s/pi-ide/mcp-token".into()),
            mcp_token_warning: None,
            languages: vec!["rust", "lua"],
            companions: vec![Announced {
                client: "gemini",
                port: 8,
                file: "/t/gemini/ide/gemini-ide-server-3-8.json".into(),
            }],
            companion_error: None,
            codex: None,
            codex_error: None,
        });
        assert_eq!(
            to_json(&started.into_args().unwrap()[1]),
            serde_json::json!({"version": "1", "seam": SEAM_VERSION, "port": 9,
                "lockfile": "/l/9.lock", "claude_lockfile": "/c/9.lock", "claude_error": null, "pid": 3,
                "mcp_url": "http://127.0.0.1:7/mcp", "mcp_error": null,
                "mcp_token_file": "/s/pi-ide/mcp-token", "mcp_token_warning": null,
                "languages": ["rust", "lua"],
                "companions": [{"client": "gemini", "port": 8,
                    "file": "/t/gemini/ide/gemini-ide-server-3-8.json"}],
                "companion_error": null, "codex": null, "codex_error": null})
        );
    }

    #[test]
    fn a_diff_part_carries_its_hunks_and_words() {
        use crate::diff::hunks::Hunk;
        let hunks = [Hunk {
            old_start: 1,
            old_len: 2,
            new_start: 3,
            new_len: 4,
        }];
        let part = HunkPart {
            first: 1024,
            hunks: &hunks,
            words: &[1024, 0, 0, 1, 2],
        };
        let args = LuaCall::diff_part(3, &part).into_args().unwrap();
        assert_eq!(
            to_json(&Value::Array(args)),
            serde_json::json!([
                "diff_part",
                3,
                "hunks",
                1024,
                [[1, 2, 3, 4]],
                [1024, 0, 0, 1, 2]
            ])
        );
        let done = LuaCall::diff_parts_done(3).into_args().unwrap();
        assert_eq!(
            to_json(&Value::Array(done)),
            serde_json::json!(["diff_part", 3, "done"])
        );
    }
}
