//! codecompanion.nvim's chat on the mock ACP agent, for the `chat` group's
//! side-by-side figures: `PI_IDE_CODECOMPANION_REFERENCE` names a checkout
//! of olimorris/codecompanion.nvim, `PI_IDE_PLENARY_REFERENCE` one of its
//! dependency nvim-lua/plenary.nvim (else `plenary.nvim` or `plenary`
//! beside it).
//!
//! Its ACP adapter is its built-in `goose` one (no authentication, no
//! handlers of its own) with the mock as its command. Its chat reads the
//! agent's stdout in `vim.system` callbacks, each scheduled onto the main
//! loop, where it decodes the JSON-RPC lines and writes every message chunk
//! into the chat buffer: a drawn batch is one such callback, and each chunk
//! is timed too.

use std::path::{Path, PathBuf};

use crate::common::{Session, eventually};
use crate::editor::{STALL_PROBE, attach_ui};

/// The checkouts codecompanion.nvim runs from.
pub struct Checkouts {
    codecompanion: PathBuf,
    plenary: PathBuf,
}

/// The checkouts, or `None` (said on stderr) when none is named.
pub fn checkouts() -> Option<Checkouts> {
    let Some(codecompanion) = std::env::var_os("PI_IDE_CODECOMPANION_REFERENCE") else {
        eprintln!("chat: codecompanion.nvim skipped (PI_IDE_CODECOMPANION_REFERENCE is not set)");
        return None;
    };
    let codecompanion = PathBuf::from(codecompanion);
    let plenary = std::env::var_os("PI_IDE_PLENARY_REFERENCE")
        .map(PathBuf::from)
        .or_else(|| {
            ["plenary.nvim", "plenary"]
                .iter()
                .map(|name| codecompanion.with_file_name(name))
                .find(|dir| dir.join("lua/plenary").is_dir())
        })
        .expect("codecompanion.nvim needs plenary.nvim: set PI_IDE_PLENARY_REFERENCE");
    for (dir, module) in [(&codecompanion, "codecompanion"), (&plenary, "plenary")] {
        assert!(
            dir.join("lua").join(module).is_dir(),
            "{} is no checkout of {module}",
            dir.display()
        );
    }
    Some(Checkouts {
        codecompanion,
        plenary,
    })
}

/// Neovim with codecompanion.nvim's chat open on `agent`, a UI attached and
/// `_G.bench` keeping the time of each batch and chunk it draws.
pub async fn session(checkouts: &Checkouts, agent: &Path) -> Session {
    let session = Session::spawn_plugin(&checkouts.codecompanion).await;
    session
        .exec(&format!(
            "vim.opt.rtp:append('{}')
             vim.cmd('runtime plugin/codecompanion.lua')
             require('codecompanion').setup({{
               adapters = {{ acp = {{ mock = function()
                 return require('codecompanion.adapters').extend('goose', {{
                   name = 'mock', formatted_name = 'Mock', commands = {{ default = {{ '{}' }} }},
                 }})
               end }} }},
               interactions = {{ chat = {{ adapter = 'mock' }} }},
             }})",
            checkouts.plenary.display(),
            agent.display()
        ))
        .await;
    attach_ui(&session).await;
    session.exec(STALL_PROBE).await;
    session.exec(TIMING).await;
    session
        .exec("_G.bench.chat = require('codecompanion').chat()")
        .await;
    eventually("codecompanion's ACP session", || async {
        let connection =
            "local c = _G.bench.chat.acp_connection; return c ~= nil and c.session_id ~= nil";
        (session.lua(connection).await == true).then_some(())
    })
    .await;
    session
}

/// Times each stdout callback (a drawn batch) and each message chunk, and
/// when the first and the last text were drawn.
const TIMING: &str = "
  local connection = require('codecompanion.acp')
  local dispatch = connection.buffer_stdout_and_dispatch
  local handler = require('codecompanion.interactions.chat.acp.handler')
  local on_chunk = handler.handle_message_chunk
  _G.bench = { calls = {}, chunks = {} }
  handler.handle_message_chunk = function(self, content)
    local t0 = vim.uv.hrtime()
    on_chunk(self, content)
    local b = _G.bench
    b.text = true
    table.insert(b.chunks, vim.uv.hrtime() - t0)
  end
  connection.buffer_stdout_and_dispatch = function(self, data)
    local t0 = vim.uv.hrtime()
    dispatch(self, data)
    local t1 = vim.uv.hrtime()
    local b = _G.bench
    if b.text then
      b.first = b.first or t1
      b.last = t1
      b.text = false
    end
    table.insert(b.calls, t1 - t0)
  end";

/// Removes the log of every JSON-RPC line its connection keeps (13 MB for
/// a 1 MB answer) in Neovim's temporary directory, which a killed Neovim
/// leaves behind.
pub async fn forget_logs(session: &Session) {
    session
        .exec("vim.fn.delete(vim.fn.fnamemodify(vim.fn.tempname(), ':h'), 'rf')")
        .await;
}

/// Lua that sends `prompt` as a person does: typed under the chat's last
/// header, then submitted.
pub fn send(prompt: &str) -> String {
    format!(
        "local chat = _G.bench.chat
         vim.api.nvim_buf_set_lines(chat.bufnr, -1, -1, false, {{ '{prompt}' }})
         chat:submit()"
    )
}

/// Lua that returns `idle` once the answer ended.
pub const STATUS: &str = "return _G.bench.chat.current_request == nil and 'idle' or 'streaming'";
