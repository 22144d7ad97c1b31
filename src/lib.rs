//! pi-ide host: the Rust half of pi-ide.nvim.
//!
//! Neovim starts this binary as an RPC job. It serves agents (pi's `pi-ide`
//! extension, Claude Code over an authenticated loopback WebSocket; any MCP
//! client over Streamable HTTP) and turns their requests into editor actions
//! that the Lua glue renders.
//!
//! Module map, by layer; each layer uses only the layers below it.
//!
//! Wiring:
//! * [`host`]        – attach, bind, announce, start the listeners, handle
//!   every event Lua sends, shut down: a short composition of named parts.
//! * [`cli`]         – the program: command line in, exit code out.
//! * [`config`], [`logging`] – the command line; tracing to a file (stdout is RPC).
//! * [`limits`]      – every limit a client can meet, in one list.
//! * `fuzzing`       – entry points for the fuzz targets in `tests/fuzz`
//!   (feature `fuzzing`, off in the plugin's build).
//!
//! Transports (parse, authenticate, forward):
//! * [`ws`]          – the WebSocket server pi and Claude Code connect to.
//! * [`http`]        – the Streamable-HTTP MCP endpoint (`/mcp`, rmcp + hyper).
//! * [`socket`]      – pi's context socket (`<root>/.pi/ide/<name>.sock`, NDJSON).
//! * [`acp`]         – the Agent Client Protocol, client side: the chat's
//!   agents, started by the host and spoken to over their stdio; and
//!   `pi-ide mcp-stdio`, `/mcp` as a stdio MCP server for them.
//! * [`codex_ipc`]   – Codex CLI's IDE socket (`$TMPDIR/codex-ipc/ipc-<uid>.sock`,
//!   length-prefixed JSON), and `pi-ide codex-hook`, its client.
//! * [`listen`]      – the `Listener`/`Handler` pair every transport fills in:
//!   a connection cap, accept backoff, a task per connection, shutdown.
//! * [`opencode`]    – opencode's server, followed: its edits asked in the
//!   review and answered, `:PiIde ask` into its prompt.
//! * [`lockfile`]    – the discovery files agents read.
//! * [`discovery`]   – Gemini CLI's and Qwen Code's discovery files.
//! * [`auth`]        – secret tokens, constant-time checks.
//!
//! Protocol and features (where an MCP tool goes):
//! * [`tools`]       – every tool, one file each, in one registry: its spec,
//!   its arguments' type, its handler, whether it waits for the person.
//! * [`mcp_ws`]      – MCP over the WebSocket as pi and Claude Code speak it
//!   (Claude Code's IDE protocol): its methods and the tools it offers.
//! * [`mcp_http`]    – the tools every MCP client gets at `/mcp` (JetBrains'
//!   names, 1-based positions, paths relative to the project root), and
//!   those a Neovim config registers.
//! * [`ide_companion`] – the IDE companion protocol of Gemini CLI and Qwen
//!   Code: `ide/contextUpdate`, and the tools it offers on top of `/mcp`'s.
//! * [`project`]     – what the project tools share: the project a call is
//!   about, its files, problems, language servers, git and edits.
//! * [`suggest`]     – `getSuggestions` to pi, cancellation, model listing.
//! * [`changes`]     – the review of what changed since a baseline, whoever
//!   changed it: `:PiIde changes`, kept or reverted hunk by hunk.
//! * [`codex`]       – what Codex's IDE channel carries: `ide-context`, and
//!   patches its hook asks the person about (Codex's patch format).
//! * [`context_review`] – the context/review protocol pi's `ide` extension
//!   speaks over [`socket`]: `hello`, `context`, review requests and
//!   `reviewResult`.
//!
//! State (knows nothing about sockets):
//! * [`state`]       – clients, pending diffs, requests sent to agents, the
//!   open review, the project root, the diagnostics mirror and the editor
//!   handle, shared by everything above.
//!
//! Neovim seam and pure helpers:
//! * [`nvim`]        – the typed msgpack-RPC seam: calls into Lua, events from it.
//! * [`diagnostics`] – the mirror `getDiagnostics` answers from, and its shapes.
//! * [`diff`]        – pending diffs, diff preparation, exact text, hunks.
//! * [`file_watch`]  – the files of loaded buffers, watched on disk, changes coalesced.
//! * [`outline`]     – tree-sitter outline, scope and comment detection.
//! * [`confine`]     – project roots (never `/` or `$HOME`), paths confined
//!   after resolving every link, reads and writes that never follow one.
//! * [`selection`]   – positions → `selection_changed` params.
//! * [`uri`]         – `file://` URIs ↔ paths.
//! * [`git`]         – git run without a shell, bounded in time and output.
//! * [`snapshot`]    – the project's files as git trees in a private store,
//!   never the person's repository: baselines and what changed since.
//! * [`jsonrpc`]     – JSON-RPC 2.0 classification and reply builders.
//! * [`client`]      – client ids, protocols, and each agent's profile
//!   (`client/<agent>.rs`: one file and one line per agent).
//! * [`mutex`]       – locking that survives a panicked task.
//! * [`peer`]        – the local process at the other end of a loopback connection.
//! * [`memory`]      – handing memory back to the OS after large diffs.
//! * [`private_file`] – 0600 files written whole (lockfiles, kept token).
//! * [`task`]        – spawning tasks with their futures boxed.

mod acp;
mod auth;
mod changes;
pub mod cli;
mod client;
mod codex;
mod codex_ipc;
pub mod config;
pub mod confine;
mod context_review;
mod diagnostics;
mod diff;
mod discovery;
mod file_watch;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod git;
pub mod host;
mod http;
mod ide_companion;
pub mod jsonrpc;
pub mod limits;
mod listen;
mod lockfile;
mod logging;
mod mcp_http;
pub mod mcp_ws;
pub mod memory;
mod mutex;
pub mod nvim;
mod opencode;
mod outline;
mod peer;
mod private_file;
mod project;
/// Unit tests' scratch directories: the integration tests' own helper.
#[cfg(test)]
mod scratch {
    pub use pi_ide_test_support::Scratch;
}
mod selection;
mod snapshot;
mod socket;
mod state;
mod suggest;
mod task;
mod tools;
mod uri;
pub mod ws;
