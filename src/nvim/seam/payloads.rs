//! The payloads of the seam's calls and events.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::lua_tables::{lua_list, lua_schema, lua_table};

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
    /// Where Gemini CLI and Qwen Code find us, when announced.
    pub companions: Vec<Announced>,
    /// Why one of them could not be served.
    pub companion_error: Option<String>,
    /// Where Codex CLI finds us, when served.
    pub codex: Option<CodexInfo>,
    /// Why Codex's socket could not be served.
    pub codex_error: Option<String>,
}

/// Codex CLI's IDE socket.
#[derive(Debug, Clone, Serialize)]
pub struct CodexInfo {
    /// The `TMPDIR` that leads Codex here (`:PiIde agent codex` sets it).
    pub tmpdir: String,
    /// The socket under it.
    pub socket: String,
    /// The shared socket (`$TMPDIR/codex-ipc/…`), when this Neovim serves it.
    pub shared: Option<String>,
    /// Why it does not.
    pub shared_note: Option<String>,
}

/// One CLI's companion listener and the discovery file announcing it.
#[derive(Debug, Clone, Serialize)]
pub struct Announced {
    /// `gemini` or `qwen`.
    pub client: &'static str,
    pub port: u16,
    pub file: String,
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
    pub(super) fn as_str(self) -> &'static str {
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
    /// The buffer has unsaved edits and its file changed on disk as well.
    #[serde(default)]
    pub disk_changed: bool,
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
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExpectedText {
    pub lines: Vec<String>,
    pub eol: bool,
    pub crlf: bool,
    /// False for a file that did not exist.
    pub exists: bool,
}

/// An edit for Lua to put into a file's buffer (loading it when needed).
/// A file without a loaded buffer that is to be written is left to the
/// host, which writes it without following links (`no_buffer`).
#[derive(Debug, Clone, Serialize)]
pub struct ApplyEdit {
    /// Absolute, inside the project root.
    pub path: String,
    /// Where `path` led when the host checked it: Lua writes the buffer only
    /// while it still does.
    pub real: String,
    pub lines: Vec<String>,
    pub eol: bool,
    pub crlf: bool,
    /// Applied only while the buffer (or the file) still holds this.
    pub expected: ExpectedText,
    /// True after approval: write the file, creating its directories.
    /// False: change the buffer only, undoably.
    pub write: bool,
    /// Only asks whether a buffer holds `path` (`lines` and `expected`
    /// are empty): `no_buffer` when none does, else nothing is done. The
    /// text of a file nobody has open need not cross into Neovim at all.
    pub probe: bool,
}

/// What `apply_edit` returns.
#[derive(Debug, Deserialize)]
pub struct AppliedEdit {
    pub ok: bool,
    /// For the agent.
    #[serde(default)]
    pub error: Option<String>,
    /// For the person, when it says more than `error`.
    #[serde(default)]
    pub why: Option<String>,
    /// Not applied because the buffer (or file) no longer holds the
    /// expected text.
    #[serde(default)]
    pub stale: bool,
    /// The buffer has the text; only writing it failed.
    #[serde(default)]
    pub in_buffer: bool,
    #[serde(default)]
    pub written: bool,
    /// The file has no loaded buffer and the edit is to be written: the
    /// host writes it.
    #[serde(default)]
    pub no_buffer: bool,
}

/// What the person is told about an accepted edit that was not applied
/// as it was (shown again, or kept in a buffer of its own).
#[derive(Debug, Serialize)]
pub struct EditNotice {
    /// Absolute.
    pub path: String,
    /// What happened, after the file's name.
    pub why: String,
    /// The accepted text, for a buffer of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<crate::diff::text::Lines>,
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
#[derive(Debug, Default, Serialize)]
pub struct LspQuery {
    pub id: u64,
    /// `hover`, `definition`, `references`, `implementation`,
    /// `type_definition`, `declaration`, `symbols`, `problems` (the file's
    /// diagnostics once its servers published), `workspace_symbols` (of
    /// `text`, across the servers; no `path`), `call_hierarchy` and
    /// `type_hierarchy` (prepare at the position), one of
    /// `incoming_calls`, `outgoing_calls`, `supertypes`, `subtypes` (of
    /// `item`, asked of client `client_id`; no position), or
    /// `workspace_diagnostics` (`workspace/diagnostic` of every server that
    /// offers it; no `path`).
    pub kind: &'static str,
    /// Absolute.
    pub path: String,
    pub line: u64,
    pub character: u64,
    /// The query of `workspace_symbols`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A hierarchy item a server returned, to ask about again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<Json>,
    /// The client that returned `item`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<u64>,
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

/// A file buffer with unsaved edits (`modified_buffers`).
#[derive(Debug, Deserialize)]
pub struct ModifiedBuffer {
    pub buf: i64,
    pub path: String,
}

/// Rows of one buffer to read (`buffer_lines`), 0-based.
#[derive(Debug, Serialize)]
pub struct BufferRows {
    pub buf: i64,
    pub rows: Vec<u64>,
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
    /// The lines of each file git has at HEAD, by its name in `files`.
    pub heads: std::collections::BTreeMap<String, Vec<String>>,
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

/// An MCP tool a Neovim config registered in Lua; its handler stays there.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct UserToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// A JSON Schema, with objects where JSON Schema needs them; checked
    /// before it is served (a missing one too, so it is refused alone).
    #[serde(default, deserialize_with = "lua_schema")]
    pub input_schema: Json,
}

/// A call of a registered tool, for Lua's handler; answered by
/// `tool_answer` `id`.
#[derive(Debug, Serialize)]
pub struct UserToolCall {
    pub id: u64,
    pub name: String,
    pub arguments: Json,
}

/// What a registered tool's handler gave: the `result` of its
/// `tool_answer`.
#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct UserToolResult {
    /// A string result.
    #[serde(default)]
    pub text: Option<String>,
    /// A table result: an object, or a list with items (an empty table is
    /// an empty object).
    #[serde(default, deserialize_with = "lua_table")]
    pub table: Option<Json>,
}

/// A run configuration or terminal command to run once the person agrees;
/// answered by `tool_answer` `id`.
#[derive(Debug, Default, Serialize)]
pub struct RunRequest {
    pub id: u64,
    /// A configuration `run_configurations` listed, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A shell command (`execute_terminal_command`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Where it runs: the project root.
    pub cwd: String,
    /// How long the call waits for it to finish; it keeps running after.
    pub timeout_ms: u64,
    /// Lines of output kept for the answer (the last ones).
    pub max_lines: u64,
}

/// `require("pi-ide.changes").start()`: take a baseline of the project.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ChangesStart {
    /// Answered by `changes_done` with this id.
    pub id: u64,
    /// Where the snapshot stores live (Neovim's state directory).
    pub store: String,
    /// The project's directory; none: the root the host follows.
    #[serde(default)]
    pub root: Option<String>,
    /// Keep the baseline this host took of the project when files changed
    /// since it (an agent starting beside another drops no changes from
    /// the review).
    #[serde(default)]
    pub keep: bool,
}

/// `:PiIde changes`: review what changed since the baseline.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ChangesReview {
    /// Answered by `changes_listed`, then `changes_done`, with this id.
    pub id: u64,
    pub store: String,
    /// The project's directory; none: the root the host follows.
    #[serde(default)]
    pub root: Option<String>,
}

/// Files a Lua tool proposes to change, through the person's approval.
#[derive(Debug, Clone, Deserialize)]
pub struct ProposedEdit {
    pub id: u64,
    #[serde(default)]
    pub title: Option<String>,
    pub files: Vec<ProposedFile>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ProposedFile {
    pub path: String,
    pub text: String,
}
