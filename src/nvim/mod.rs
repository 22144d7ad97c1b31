//! The msgpack-RPC seam with Neovim. This table is the architecture; keep it
//! in sync with `lua/pi-ide/host.lua`.
//!
//! Lua → host (`rpcnotify`, handled in [`handler`]):
//! | method         | args                          | meaning                                   |
//! |----------------|-------------------------------|-------------------------------------------|
//! | `selection`    | positions table               | debounced cursor/selection of a file buffer |
//! | `diff_decided` | id, accepted, text?           | the person accepted/rejected diff `id`    |
//! | `cwd`          | dir                           | Neovim's cwd changed (workspace folder)   |
//! | `suggest`      | request table (token, buf, …) | ask the pi agent for inline suggestions   |
//! | `suggest_cancel` | token                       | the person moved on: cancel that request  |
//! | `list_models`  | –                             | `:PiIde model`: ask pi for its models     |
//! | `stop`         | –                             | `:PiIde stop`: clean up and exit          |
//!
//! Neovim → host: `nvim_buf_lines_event` / `nvim_buf_detach_event` for
//! buffers the host attached to (first suggestion request in a buffer);
//! they go straight to the outline worker.
//!
//! Lua → host (`rpcrequest`, answered in microseconds): `ping` → `{version, seam}`.
//!
//! Host → Lua (`nvim_exec_lua` from spawned tasks, wrapped by [`editor::Editor`]):
//! | Lua function                         | when                                     |
//! |--------------------------------------|------------------------------------------|
//! | `pi-ide.host`._on_started(info)      | server listening, lockfile written       |
//! | `pi-ide.host`._on_client(event, c)   | a client connected / initialized / left  |
//! | `pi-ide.diff`._open(spec)            | `openDiff`; an error means `DIFF_REJECTED` |
//! | `pi-ide.diff`._close(id)             | the agent or shutdown closed diff `id`   |
//! | `pi-ide.diagnostics`.collect(uri?)   | `getDiagnostics`                         |
//! | `pi-ide.selection`.positions()       | a client initialized: current context    |
//! | `pi-ide.suggest`._on_result(t, l, e) | suggestions (or an error) for token `t`  |
//! | `pi-ide.models`._on_models(r, e)     | the answer to `listSuggestionModels`     |
//! | `nvim_buf_get_lines`                 | text of a reported selection             |
//! | `nvim_buf_attach` + lines, tick      | start mirroring a buffer                 |

pub mod batched;
pub mod convert;
pub mod editor;
pub mod handler;
