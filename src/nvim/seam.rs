//! The Rust half of the Lua ⇄ host seam: every Lua function the host calls
//! ([`LuaCall`]) and every notification Lua sends ([`EditorEvent`]), with
//! their payloads. The Lua half is `lua/pi-ide/seam.lua`; a test checks that
//! both halves list the same names and agree on [`SEAM_VERSION`].
//!
//! Host → Lua, `require('pi-ide.seam').call(name, ...)` via `nvim_exec_lua`:
//! | call          | args                    | when                                       |
//! |---------------|-------------------------|--------------------------------------------|
//! | `started`     | info                    | server listening, lockfile written         |
//! | `client`      | event, client           | a client connected / initialized / updated / left (client: id, kind, name?, pid?) |
//! | `open_diff`   | view                    | `openDiff`; a Lua error means `DIFF_REJECTED` |
//! | `close_diff`  | id, reason?             | the agent closed diff `id` (and why)       |
//! | `positions`   | –                       | a client initialized: current context      |
//! | `suggestions` | token, list?, error?    | suggestions (or an error) for token        |
//! | `models`      | result?, error?         | the answer to `listSuggestionModels`       |
//! | `diff_hunks`  | id, seq, hunks, words   | large diff `id` re-diffed up to edit `seq` |
//! | `workspace`   | –                       | an agent asks for the workspace: the global cwd |
//! | `project_roots` | –                     | MCP tools: `{cwd, folders?}`, the global cwd and the language servers' workspace folders |
//! | `current_positions` | –                 | `getCurrentSelection`: the current window's position, or nil |
//! | `open_file`   | request                 | `openFile`: show (or load) a file, select text; → `{filetype, line_count}` |
//! | `open_editors`| –                       | `getOpenEditors`: listed file buffers      |
//! | `document_state` | path                 | `checkDocumentDirty`: `{modified}` or nil  |
//! | `save_document`  | path                 | `saveDocument`: `{ok, saved, message}` or nil |
//! | `buffer_text` | path                    | MCP `get_file_text_by_path`: `{lines}` of the file's loaded buffer (unsaved edits included), or nil |
//! | `lsp_request` | query                   | MCP LSP tools: start `{id, kind, path, line, character, text?, timeout_ms}`; answered later by `lsp_answer` |
//! | `lsp_edit`    | query                   | MCP edit tools: start an LSP request whose answer is edits (`format`, `rename`, `code_actions`, `apply_action`), computed without touching buffers; answered later by `lsp_answer` with `{files = [{path, text}]}` or `{actions}` |
//! | `apply_edit`  | edit                    | MCP edits: put an accepted (or unapproved) text into the file's buffer in one undo step, and write it when asked; → `{ok, error?, written}` |
//! | `socket`      | path?, error?           | the context socket moved (or failed, or is gone) |
//! | `review_open` | review                  | a socket client asked for a review `{id, root, files}`; a Lua error cancels it |
//! | `review_close`| id, reason              | review `id` ends without a result (its client left) |
//! | `review_refused` | message              | a review request was refused: tell the person why |
//!
//! Lua → host, `rpcnotify` (parsed by [`EditorEvent::parse`]):
//! | event                 | args                  | meaning                                  |
//! |-----------------------|-----------------------|------------------------------------------|
//! | `selection`           | positions             | debounced cursor/selection of a file     |
//! | `diff_decided`        | id, accepted, text?   | the person accepted/rejected diff `id`   |
//! | `cwd`                 | dir, root             | Neovim's cwd changed (workspace folder), and its project root |
//! | `suggest`             | request               | ask the pi agent for inline suggestions  |
//! | `suggest_cancel`      | token                 | the person moved on: cancel that request |
//! | `list_models`         | –                     | `:PiIde model`: ask pi for its models    |
//! | `stop`                | –                     | `:PiIde stop`: clean up and exit         |
//! | `diagnostics_pending` | –                     | diagnostics changed; the data follows    |
//! | `diagnostics`         | files                 | diagnostics of the buffers that changed  |
//! | `mention`             | mention               | `:PiIde send`: at-mention for Claude     |
//! | `diff_edited`         | id, seq, side, first, last, lines | a side of large diff `id` changed: lines `first..last` (0-based, as last sent) are now `lines` |
//! | `no_file`             | –                     | debounced: the current window shows no file (help, terminal, …) |
//! | `review_done`         | result                | review `id` was submitted or cancelled `{id, status, comments}` |
//! | `lsp_answer`          | answer                | `{id, result?, error?, no_server?, filetype?}` for `lsp_request` `id` |
//!
//! Neovim itself also sends `nvim_buf_lines_event` / `nvim_buf_detach_event`
//! for buffers the host attached to; the host reads lines with
//! `nvim_buf_get_lines` and attaches with `nvim_buf_attach`.

use nvim_rs::Value;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::convert::{from_json, to_json};
use crate::diagnostics::BufferDiagnostics;
use crate::diff::hunks::Hunk;
use crate::diff::live::{Edit, Side};
use crate::diff::prepare::DiffView;
use crate::selection::Positions;

/// Version of the seam. The Lua glue refuses a host that reports another
/// number, so a stale binary is caught with a clear message.
pub const SEAM_VERSION: u64 = 9;

/// What the host reports once agents can find it.
#[derive(Debug, Serialize)]
pub struct Started {
    pub version: &'static str,
    pub seam: u64,
    pub port: u16,
    pub lockfile: String,
    /// Where Claude Code finds us too, when announced there.
    pub claude_lockfile: Option<String>,
    /// Why the Claude Code lockfile could not be written.
    pub claude_error: Option<String>,
    pub pid: u32,
    /// The Streamable-HTTP MCP endpoint, when enabled.
    pub mcp_url: Option<String>,
    /// Why the MCP endpoint could not listen.
    pub mcp_error: Option<String>,
    /// Where the MCP token is kept across restarts (a fixed port).
    pub mcp_token_file: Option<String>,
    /// Why the kept token could not be used (never the token itself).
    pub mcp_token_warning: Option<String>,
    /// Filetypes the host parses itself.
    pub languages: Vec<&'static str>,
}

#[derive(Debug, Clone, Copy)]
pub enum ClientEvent {
    Connected,
    Initialized,
    /// More became known (Claude's pid).
    Updated,
    Disconnected,
}

impl ClientEvent {
    fn as_str(self) -> &'static str {
        match self {
            ClientEvent::Connected => "connected",
            ClientEvent::Initialized => "initialized",
            ClientEvent::Updated => "updated",
            ClientEvent::Disconnected => "disconnected",
        }
    }
}

/// A client as Lua's status mirror stores it.
#[derive(Debug, Serialize)]
pub struct ClientInfo {
    pub id: u64,
    pub kind: &'static str,
    pub name: Option<String>,
    /// The agent's process id, once Claude sent `ide_connected`.
    pub pid: Option<u32>,
}

/// `openFile`: which file, and what to select in it.
#[derive(Debug, Serialize)]
pub struct OpenFile {
    /// Absolute, inside the workspace.
    pub path: String,
    /// Select from the first occurrence of `start_text` …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_text: Option<String>,
    /// … to the first occurrence of `end_text` from there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_text: Option<String>,
    pub select_to_end_of_line: bool,
    /// False: load the buffer without touching windows or the cursor.
    pub frontmost: bool,
    /// Put the cursor on this 1-based line (instead of selecting text) …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// … at this 1-based column, in UTF-16 code units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
}

/// What `open_file` returns.
#[derive(Debug, Deserialize)]
pub struct OpenedFile {
    pub filetype: String,
    pub line_count: u64,
}

/// One listed file buffer, as `open_editors` returns it.
#[derive(Debug, Deserialize)]
pub struct OpenEditor {
    pub path: String,
    /// The current window's buffer.
    pub active: bool,
    pub filetype: String,
    pub modified: bool,
}

/// What `document_state` returns for a file that has a buffer.
#[derive(Debug, Deserialize)]
pub struct DocumentState {
    pub modified: bool,
}

/// What `buffer_text` returns for a file with a loaded buffer.
#[derive(Debug, Deserialize)]
pub struct BufferText {
    pub lines: Vec<String>,
    /// Written with a final newline ('eol', or 'fixeol').
    #[serde(default = "yes")]
    pub eol: bool,
    /// 'fileformat' is `dos`.
    #[serde(default)]
    pub crlf: bool,
}

fn yes() -> bool {
    true
}

/// An LSP request whose answer is edits, for Lua to make; positions are
/// 0-based, characters in UTF-16 code units.
#[derive(Debug, Default, Serialize)]
pub struct LspEditQuery {
    pub id: u64,
    /// `format`, `rename`, `code_actions` or `apply_action`.
    pub kind: &'static str,
    /// Absolute; empty for `apply_action`.
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub character: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_character: Option<u64>,
    /// `rename`: the new name, and the symbol to find when no position is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol_name: Option<String>,
    /// `apply_action`: an id `code_actions` gave.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    /// Bound of the whole request, waiting for a server included.
    pub timeout_ms: u64,
}

/// A file's text as it was shown on the left of its diff.
#[derive(Debug, Clone, Serialize)]
pub struct ExpectedText {
    pub lines: Vec<String>,
    pub eol: bool,
    pub crlf: bool,
    /// False for a file that did not exist.
    pub exists: bool,
}

/// An edit for Lua to put into a file's buffer (loading it when needed)
/// or, for a file without a loaded buffer that is to be written, into the
/// file itself.
#[derive(Debug, Clone, Serialize)]
pub struct ApplyEdit {
    /// Absolute, inside the project root.
    pub path: String,
    pub lines: Vec<String>,
    pub eol: bool,
    pub crlf: bool,
    /// Applied only while the buffer (or the file) still holds this.
    pub expected: ExpectedText,
    /// True after approval: write the file, creating its directories.
    /// False: change the buffer only, undoably.
    pub write: bool,
}

/// What `apply_edit` returns.
#[derive(Debug, Deserialize)]
pub struct AppliedEdit {
    pub ok: bool,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub written: bool,
}

/// What `save_document` returns for a file that has a buffer.
#[derive(Debug, Deserialize)]
pub struct SaveOutcome {
    /// False when the write failed or was refused.
    pub ok: bool,
    /// Whether the file was written.
    pub saved: bool,
    pub message: String,
}

/// An LSP request for Lua to make; positions are 0-based, `character` in
/// UTF-16 code units.
#[derive(Debug, Serialize)]
pub struct LspQuery {
    pub id: u64,
    /// `hover`, `definition`, `references`, `symbols`, `problems` (the
    /// file's diagnostics once its servers published) or
    /// `workspace_symbols` (of `text`, across the servers; no `path`).
    pub kind: &'static str,
    /// Absolute.
    pub path: String,
    pub line: u64,
    pub character: u64,
    /// The query of `workspace_symbols`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bound of the whole request, waiting for a server included.
    pub timeout_ms: u64,
}

/// Lua's answer to [`LspQuery`] `id`.
#[derive(Debug, Clone, Deserialize)]
pub struct LspAnswer {
    pub id: u64,
    #[serde(default)]
    pub result: Option<Json>,
    #[serde(default)]
    pub error: Option<String>,
    /// No language server is attached to the file.
    #[serde(default)]
    pub no_server: bool,
    #[serde(default)]
    pub filetype: Option<String>,
}

/// Where the context socket listens now; both `None`: nowhere (off, or
/// removed at shutdown).
#[derive(Debug, Default, Serialize)]
pub struct SocketInfo {
    pub path: Option<String>,
    /// Why there is no socket, for the person.
    pub error: Option<String>,
}

/// A review a socket client asked for, its files already checked.
#[derive(Debug, Serialize)]
pub struct Review {
    pub id: u64,
    /// The project root the files are relative to.
    pub root: String,
    /// Relative to `root`; each an existing regular file inside it.
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReviewStatus {
    Submitted,
    Cancelled,
}

/// One comment of a finished review, as the review UI wrote it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewComment {
    /// Relative to the project root.
    pub file: String,
    /// 1-based, in the file as shown.
    pub line: u64,
    /// Inclusive; only for ranges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    pub text: String,
    /// The lines around the comment as shown (`"12: foo"`, `"> 13: bar"`).
    #[serde(deserialize_with = "lua_list")]
    pub context: Vec<String>,
}

/// What the review UI reports when review `id` ends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReviewDone {
    pub id: u64,
    pub status: ReviewStatus,
    #[serde(default, deserialize_with = "lua_list")]
    pub comments: Vec<ReviewComment>,
}

/// A list from Lua, where an empty table arrives as an empty map.
fn lua_list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    match Json::deserialize(deserializer)? {
        Json::Object(map) if map.is_empty() => Ok(vec![]),
        list => serde_json::from_value(list).map_err(serde::de::Error::custom),
    }
}

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
    },
    Positions,
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
    Workspace,
    ProjectRoots,
    CurrentPositions,
    OpenFile(OpenFile),
    OpenEditors,
    DocumentState {
        path: String,
    },
    SaveDocument {
        path: String,
    },
    BufferText {
        path: String,
    },
    LspRequest(LspQuery),
    LspEdit(LspEditQuery),
    ApplyEdit(ApplyEdit),
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
        "workspace",
        "project_roots",
        "current_positions",
        "open_file",
        "open_editors",
        "document_state",
        "save_document",
        "buffer_text",
        "lsp_request",
        "lsp_edit",
        "apply_edit",
        "socket",
        "review_open",
        "review_close",
        "review_refused",
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
            LuaCall::Workspace => "workspace",
            LuaCall::ProjectRoots => "project_roots",
            LuaCall::CurrentPositions => "current_positions",
            LuaCall::OpenFile(_) => "open_file",
            LuaCall::OpenEditors => "open_editors",
            LuaCall::DocumentState { .. } => "document_state",
            LuaCall::SaveDocument { .. } => "save_document",
            LuaCall::BufferText { .. } => "buffer_text",
            LuaCall::LspRequest(_) => "lsp_request",
            LuaCall::LspEdit(_) => "lsp_edit",
            LuaCall::ApplyEdit(_) => "apply_edit",
            LuaCall::Socket(_) => "socket",
            LuaCall::ReviewOpen(_) => "review_open",
            LuaCall::ReviewClose { .. } => "review_close",
            LuaCall::ReviewRefused { .. } => "review_refused",
        }
    }

    /// The arguments of `seam.call`: the name, then the payload.
    pub fn into_args(self) -> Result<Vec<Value>, String> {
        let mut args = vec![Value::from(self.name())];
        let payload = match self {
            LuaCall::Started(info) => vec![msgpack(&info)?],
            LuaCall::Client(event, client) => vec![Value::from(event.as_str()), msgpack(&client)?],
            LuaCall::OpenDiff(view) => vec![msgpack(&view)?],
            LuaCall::CloseDiff { id, reason } => {
                vec![Value::from(id), reason.map_or(Value::Nil, Value::from)]
            }
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
            LuaCall::Workspace
            | LuaCall::ProjectRoots
            | LuaCall::CurrentPositions
            | LuaCall::OpenEditors => vec![],
            LuaCall::OpenFile(request) => vec![msgpack(&request)?],
            LuaCall::LspRequest(query) => vec![msgpack(&query)?],
            LuaCall::LspEdit(query) => vec![msgpack(&query)?],
            LuaCall::ApplyEdit(edit) => vec![msgpack(&edit)?],
            LuaCall::DocumentState { path }
            | LuaCall::SaveDocument { path }
            | LuaCall::BufferText { path } => {
                vec![Value::from(path)]
            }
            LuaCall::Socket(SocketInfo { path, error }) => vec![
                path.map_or(Value::Nil, Value::from),
                error.map_or(Value::Nil, Value::from),
            ],
            LuaCall::ReviewOpen(review) => vec![msgpack(&review)?],
            LuaCall::ReviewClose { id, reason } => vec![Value::from(id), Value::from(reason)],
            LuaCall::ReviewRefused { message } => vec![Value::from(message)],
        };
        args.extend(payload);
        Ok(args)
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
}

/// What Neovim told the host, in the order it happened.
#[derive(Debug)]
pub enum EditorEvent {
    Selection(Positions),
    /// The current window shows no file.
    NoFile,
    DiffDecided(Decision),
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
}

impl EditorEvent {
    /// Every event's name, as `lua/pi-ide/seam.lua` lists them.
    pub const NAMES: &[&str] = &[
        "selection",
        "diff_decided",
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
    ];

    /// Parses one notification; `None` for anything malformed.
    pub fn parse(name: &str, args: &[Value]) -> Option<EditorEvent> {
        let payload = || args.first().map(to_json);
        match name {
            "selection" => typed(payload()?).map(EditorEvent::Selection),
            "diff_decided" => {
                let id = args.first()?.as_u64()?;
                let accepted = match args.get(1)?.as_bool()? {
                    true => Some(args.get(2)?.as_str()?.to_owned()),
                    false => None,
                };
                Some(EditorEvent::DiffDecided(Decision { id, accepted }))
            }
            "cwd" => {
                let dir = args.first()?.as_str()?.to_owned();
                let root = match args.get(1) {
                    Some(root) => root.as_str()?.to_owned(),
                    None => dir.clone(),
                };
                Some(EditorEvent::Cwd { dir, root })
            }
            "no_file" => Some(EditorEvent::NoFile),
            "review_done" => typed(payload()?).map(EditorEvent::ReviewDone),
            "lsp_answer" => typed(payload()?).map(EditorEvent::LspAnswer),
            "suggest" => typed(payload()?).map(EditorEvent::Suggest),
            "suggest_cancel" => Some(EditorEvent::SuggestCancel(args.first()?.as_u64()?)),
            "list_models" => Some(EditorEvent::ListModels),
            "mention" => typed(payload()?).map(EditorEvent::Mention),
            "stop" => Some(EditorEvent::Stop),
            "diagnostics_pending" => Some(EditorEvent::DiagnosticsPending),
            // Lua sends an empty list as an empty map.
            "diagnostics" => match payload()? {
                Json::Object(map) if map.is_empty() => Some(EditorEvent::Diagnostics(vec![])),
                files => typed(files).map(EditorEvent::Diagnostics),
            },
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

    fn map(pairs: Vec<(&str, Value)>) -> Value {
        Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        )
    }

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
            },
            LuaCall::Positions,
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
            LuaCall::Workspace,
            LuaCall::ProjectRoots,
            LuaCall::CurrentPositions,
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
            }),
            LuaCall::LspEdit(LspEditQuery {
                id: 2,
                kind: "rename",
                path: "/w/a.py".into(),
                new_name: Some("b".into()),
                ..Default::default()
            }),
            LuaCall::ApplyEdit(ApplyEdit {
                path: "/w/a".into(),
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
            }),
            LuaCall::Socket(SocketInfo::default()),
            LuaCall::ReviewOpen(Review {
                id: 1,
                root: "/w".into(),
                files: vec!["a".into()],
            }),
            LuaCall::ReviewClose {
                id: 1,
                reason: "the agent disconnected".into(),
            },
            LuaCall::ReviewRefused {
                message: "no".into(),
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
            sides: Prepared {
                original: Lines::split("a\r\n"),
                original_exists: true,
                proposed: Lines::split("b"),
                hunks: Some(vec![Hunk {
                    old_start: 0,
                    old_len: 1,
                    new_start: 0,
                    new_len: 1,
                }]),
                words: Some(vec![0, 0, 0, 0, 1, 0, 1, 0, 0, 1]),
            },
            edit: None,
        };
        let args = LuaCall::OpenDiff(Box::new(view)).into_args().unwrap();
        assert_eq!(
            to_json(&args[1]),
            serde_json::json!({
                "id": 5, "tab_name": "t", "path": "/w/a", "original_path": "/w/a",
                "client": "pi", "original_exists": true,
                "original": {"lines": ["a"], "eol": true, "crlf": true},
                "proposed": {"lines": ["b"], "eol": false, "crlf": false},
                "hunks": [[0, 1, 0, 1]],
                "words": [0, 0, 0, 0, 1, 0, 1, 0, 0, 1],
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
        });
        assert_eq!(
            to_json(&started.into_args().unwrap()[1]),
            serde_json::json!({"version": "1", "seam": SEAM_VERSION, "port": 9,
                "lockfile": "/l/9.lock", "claude_lockfile": "/c/9.lock", "claude_error": null, "pid": 3,
                "mcp_url": "http://127.0.0.1:7/mcp", "mcp_error": null,
                "mcp_token_file": "/s/pi-ide/mcp-token", "mcp_token_warning": null,
                "languages": ["rust", "lua"]})
        );
    }

    #[test]
    fn parses_the_events() {
        let accepted = EditorEvent::parse(
            "diff_decided",
            &[Value::from(3), Value::from(true), Value::from("text\n")],
        );
        assert!(
            matches!(accepted, Some(EditorEvent::DiffDecided(Decision { id: 3, accepted: Some(t) })) if t == "text\n")
        );
        let rejected = EditorEvent::parse("diff_decided", &[Value::from(4), Value::from(false)]);
        assert!(matches!(
            rejected,
            Some(EditorEvent::DiffDecided(Decision {
                id: 4,
                accepted: None
            }))
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
                "list_models" | "stop" | "diagnostics_pending" | "no_file"
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
