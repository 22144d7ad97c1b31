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
//! | `open_diff`   | view                    | `openDiff`; a Lua error means `DIFF_REJECTED`; a large diff (`parts`) answers `{original, proposed}`, its buffers, which the host fills with `nvim_buf_set_lines` |
//! | `close_diff`  | id, reason?, taken      | the agent closed diff `id` (and why); `taken`: it took the proposal as the person left it, so their edits are not kept |
//! | `positions`   | –                       | a client initialized: current context      |
//! | `diff_text`   | id                      | companion `closeDiff`: the proposal of diff `id` as the person left it, or nil |
//! | `suggestions` | token, list?, error?    | suggestions (or an error) for token        |
//! | `models`      | result?, error?         | the answer to `listSuggestionModels`       |
//! | `diff_hunks`  | id, seq, hunks, words   | large diff `id` re-diffed up to edit `seq` |
//! | `diff_part`   | id, kind, first, …      | part of large diff `id`'s hunks, `hunks` (first index, hunks, words), then `done` once its lines are in its buffers; → false once the diff is gone |
//! | `workspace`   | –                       | an agent asks for the workspace: the global cwd |
//! | `project_roots` | –                     | MCP tools: `{cwd, folders?}`, the global cwd and the language servers' workspace folders |
//! | `current_positions` | –                 | `getCurrentSelection`: the current window's position, or nil |
//! | `selected_rows` | buf, first, last, max_bytes | selection context: `[text]`, rows `first..=last` (0-based) with at most `max_bytes` of text in all (rows past it left out, the last one cut), no row copied whole |
//! | `open_file`   | request                 | `openFile`: show (or load) a file, select text; → `{filetype, line_count}` |
//! | `open_editors`| –                       | `getOpenEditors`: listed file buffers      |
//! | `document_state` | path                 | `checkDocumentDirty`: `{modified}` or nil  |
//! | `save_document`  | path, real           | `saveDocument`: `{ok, saved, message}` or nil; writes only while `path` still leads to `real` |
//! | `buffer_text` | path                    | MCP `get_file_text_by_path`: `{lines}` of the file's loaded buffer (unsaved edits included), or nil |
//! | `lsp_request` | query                   | MCP LSP tools: start `{id, kind, path, line, character, text?, item?, client_id?, timeout_ms}` (kinds in `LspQuery`; hierarchy steps ask client `client_id` about `item`); answered later by `lsp_answer` with hover's `{markdown}`, `workspace_diagnostics`' `{responses = [{client, encoding, reports}], silent, errors}`, else the servers' own `{responses = [{encoding, client_id, result}]}` |
//! | `modified_buffers` | –                  | MCP LSP tools: `[{buf, path}]`, the loaded file buffers with unsaved edits |
//! | `buffer_lines` | wanted                 | MCP LSP tools: `[[text]]`, the text of the rows of each `{buf, rows}` (0-based) |
//! | `lsp_edit`    | query                   | MCP edit tools: start an LSP request whose answer is edits (`format`, `rename`, `code_actions`, `apply_action`), answered later by `lsp_answer` with the server's edit as it sent it, `{edit (a WorkspaceEdit), encoding, note?}` (the host applies it), or `{actions}` |
//! | `apply_edit`  | edit                    | MCP edits: put an accepted (or unapproved) text into the file's buffer in one undo step, and write it when asked (only while `path` still leads to `real`), if it still holds `expected`; → `{ok, error?, why?, stale?, in_buffer?, written, no_buffer?}` (`no_buffer`: the host writes the file); with `probe`, only whether a buffer holds `path` |
//! | `edit_notice` | notice                  | MCP edits: tell the person an accepted edit of `{path}` was not applied as it was (`why`) and keep its text (`kept`, lines) in a buffer of its own; → that buffer or nil |
//! | `socket`      | path?, error?           | the context socket moved (or failed, or is gone) |
//! | `review_open` | review                  | a socket client asked for a review `{id, root, files, heads}` (heads: file → its lines at git HEAD, read by the host); a Lua error cancels it |
//! | `review_close`| id, reason              | review `id` ends without a result (its client left) |
//! | `review_refused` | message              | a review request was refused: tell the person why |
//! | `refused`     | message                 | an agent's request was refused (a path out of the project): tell the person why |
//! | `files_changed` | changed, gone         | watched files changed on disk, or went away (the names `watch_files` sent; one call per quiet period) |
//! | `user_tool`   | call                    | MCP: run the handler of the registered tool `{id, name, arguments}`; answered later by `tool_answer` with `{text}` (a string result) or `{table}` (a table result), or an error |
//! | `edit_decided`| id, result              | MCP: what became of `propose_edit` `id`: `{ok, text, structured?}` |
//! | `run_configurations` | id               | MCP `get_run_configurations`: answered later by `tool_answer` with `{configurations = [{name, kind, command?, description}]}` |
//! | `sessions`    | endpoint, open          | an MCP endpoint (`MCP`, `gemini`, `qwen`) has `open` sessions now (after a quiet 200 ms) |
//! | `chat_update` | chat, updates           | ACP chat `chat`: what happened since the last call, at most one a frame (`{kind = text, thought, user, tool, tool_update, plan, commands, mode, modes, config, status, auth, notice, ended, …}`) |
//! | `chat_permission` | request             | an ACP agent asks permission `{id, chat, tool_call, options = [{id, name, kind}]}`; answered by `chat_permission` |
//! | `chat_terminal` | request               | an ACP agent runs `{id, chat, command, args, env, cwd, limit}` in a terminal buffer; its end comes as `chat_terminal_exit` |
//! | `chat_terminal_output` | id             | → `{output, truncated}`: terminal `id`'s text, its last `limit` bytes |
//! | `chat_terminal_kill` | id, release      | stop terminal `id`'s command (`release`: the agent is done with it) |
//! | `run_command` | request                 | MCP: ask the person, then run configuration `name` or shell `command` in a terminal window `{id, name?, command?, cwd, timeout_ms, max_lines}`; answered later by `tool_answer` with `{command, exit_code?, output, cut?, running?, declined?, quickfix?, started?}` |
//! | `changes_listed` | id, listing           | `:PiIde changes`: the files changed since the baseline `{since, files = [{path, relative, change, note?}], more}`, before their diffs open |
//! | `changes_done` | id, result             | what became of `changes_start` or `changes_review` `id`: `{ok, error?, since?, kept?, git?, files? = [{path, fate, why?}]}` |
//!
//! Lua → host, `rpcnotify` (parsed by [`EditorEvent::parse`]):
//! | event                 | args                  | meaning                                  |
//! |-----------------------|-----------------------|------------------------------------------|
//! | `selection`           | positions             | debounced cursor/selection of a file     |
//! | `diff_decided`        | id, accepted, text?/reason? | the person accepted (the final text) or rejected (and why, if they said) diff `id` |
//! | `diff_closed`         | id                    | the person closed diff `id` without deciding (its tab, a side's last window, a side's buffer) |
//! | `cwd`                 | dir, root             | Neovim's cwd changed (workspace folder), and its project root |
//! | `suggest`             | request               | ask the pi agent for inline suggestions  |
//! | `suggest_cancel`      | token                 | the person moved on: cancel that request |
//! | `list_models`         | –                     | `:PiIde model`: ask pi for its models    |
//! | `stop`                | –                     | `:PiIde stop`: clean up and exit         |
//! | `diagnostics_pending` | –                     | diagnostics changed; the data follows    |
//! | `diagnostics`         | files                 | diagnostics of the buffers that changed `[{buf, uri, diagnostics, loaded?, modified?}]` |
//! | `mention`             | mention               | `:PiIde send`: at-mention for Claude     |
//! | `diff_edited`         | id, seq, side, first, last, lines | a side of large diff `id` changed: lines `first..last` (0-based, as last sent) are now `lines` |
//! | `no_file`             | –                     | debounced: the current window shows no file (help, terminal, …) |
//! | `review_done`         | result                | review `id` was submitted or cancelled `{id, status, comments}` |
//! | `lsp_answer`          | answer                | `{id, result?, error?, no_server?, filetype?}` for `lsp_request` or `lsp_edit` `id` |
//! | `roots_changed`       | –                     | the cwd, a language server or its workspace folders changed: the project roots the host keeps are stale |
//! | `watch_files`         | paths                 | every file to watch on disk (the whole list): each loaded buffer's with option `watch_files` (debounced), and those a diff watches (its left side, the file an agent writes after an accept) |
//! | `file_written`        | path                  | Neovim wrote this watched file itself: no change to report |
//! | `tool_answer`         | answer                | `{id, result?, error?}` for `user_tool`, `run_configurations` or `run_command` `id` |
//! | `tools_changed`       | tools                 | every MCP tool the config registered `[{name, description, input_schema}]` |
//! | `chat`                | op                    | ACP chat: `{op = open, prompt, cancel, mode, config, auth, close, chat, …}` |
//! | `chat_permission`     | answer                | `{id, option?}`: the person's answer (nil: dismissed, `cancelled`) |
//! | `chat_terminal_exit`  | exit                  | `{id, exit_code?, signal?}`: an agent's terminal command ended |
//! | `propose_edit`        | edit                  | a registered tool proposes `{id, title?, files = [{path, text}]}`; answered by `edit_decided` |
//! | `changes_start`       | request               | take a baseline of the project `{id, store, root?, keep?}`; answered by `changes_done` |
//! | `changes_review`      | request               | review what changed since the baseline `{id, store, root?}`; answered by `changes_listed`, then `changes_done` |
//! | `opencode_follow`     | agent                 | `:PiIde agent opencode` started opencode's server `{id, port, password, cwd, pid}`: follow its events (until its process is gone), review its edits |
//! | `opencode_forget`     | id                    | that opencode exited                     |
//! | `opencode_prompt`     | prompt                | `:PiIde ask` into opencode: `{id, text, submit}` through its `/tui` API |
//!
//! Neovim itself also sends `nvim_buf_lines_event` / `nvim_buf_detach_event`
//! for buffers the host attached to; the host reads lines with
//! `nvim_buf_get_lines` and attaches with `nvim_buf_attach`.

mod calls;
mod chat;
mod diff_view;
mod events;
mod lua_tables;
mod payloads;

pub use calls::*;
pub use chat::*;
pub use events::*;
pub use lua_tables::{items, list};
pub use payloads::*;

/// Version of the seam. The Lua glue refuses a host that reports another
/// number, so a stale binary is caught with a clear message.
pub const SEAM_VERSION: u64 = 25;

/// A msgpack map from string keys, as Lua tables arrive (tests).
#[cfg(test)]
fn map(pairs: Vec<(&str, nvim_rs::Value)>) -> nvim_rs::Value {
    nvim_rs::Value::Map(
        pairs
            .into_iter()
            .map(|(k, v)| (nvim_rs::Value::from(k), v))
            .collect(),
    )
}
