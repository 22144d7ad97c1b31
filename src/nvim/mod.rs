//! The msgpack-RPC seam with Neovim. This table is the architecture; keep it
//! in sync with `lua/pi-ide/host.lua`.
//!
//! Lua → host (`rpcnotify`, handled in [`handler`]):
//! | method         | args                          | meaning                                   |
//! |----------------|-------------------------------|-------------------------------------------|
//! | `selection`    | positions table               | debounced cursor/selection of a file buffer |
//! | `diff_decided` | id, accepted, text?           | the person accepted/rejected diff `id`    |
//! | `cwd`          | dir                           | Neovim's cwd changed (workspace folder)   |
//! | `stop`         | –                             | `:PiIde stop`: clean up and exit          |
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
//! | `nvim_buf_get_lines`                 | text of a reported selection             |

pub mod convert;
pub mod editor;
pub mod handler;
