-- Public entry points: setup() and status(). See :help pi-ide.
local M = {}

local function start()
  require("pi-ide.host").start()
end

local function start_after_vim_enter()
  if vim.v.vim_did_enter == 1 then
    vim.schedule(start)
    return
  end
  vim.api.nvim_create_autocmd("VimEnter", {
    group = vim.api.nvim_create_augroup("PiIdeStart", { clear = true }),
    once = true,
    callback = function()
      vim.schedule(start)
    end,
  })
end

-- An autocmd callback that loads its module on first use, keeping setup()
-- (and so Neovim's start-up) cheap.
local function lazy(module, fn)
  return function(args)
    require(module)[fn](args)
  end
end

-- Option `watch_files`: the host watches the files of loaded buffers.
local function install_file_watch(group)
  local autocmd = vim.api.nvim_create_autocmd
  autocmd({ "BufNewFile", "BufFilePost", "BufUnload" }, {
    group = group,
    callback = lazy("pi-ide.follow", "on_buffers"),
    desc = "pi-ide: the files to watch",
  })
  autocmd("User", {
    group = group,
    pattern = "PiIdeStarted",
    callback = lazy("pi-ide.follow", "on_buffers"),
    desc = "pi-ide: the files to watch",
  })
  autocmd("BufReadPost", {
    group = group,
    callback = lazy("pi-ide.follow", "on_read"),
    desc = "pi-ide: the files to watch",
  })
  autocmd("BufWritePost", {
    group = group,
    callback = lazy("pi-ide.follow", "on_write"),
    desc = "pi-ide: Neovim's own writes are no change",
  })
  autocmd("FileChangedShell", {
    group = group,
    callback = lazy("pi-ide.follow", "on_file_changed_shell"),
    desc = "pi-ide: no W11/W12 prompt; reload or tell instead",
  })
end

local function install_autocmds(group, values)
  local autocmd = vim.api.nvim_create_autocmd
  if values.selection.enabled then
    autocmd({ "CursorMoved", "CursorMovedI", "ModeChanged", "BufEnter", "TextChanged", "TextChangedI" }, {
      group = group,
      callback = lazy("pi-ide.selection", "on_event"),
      desc = "pi-ide: debounce selection_changed",
    })
  end
  autocmd("DiagnosticChanged", {
    group = group,
    callback = lazy("pi-ide.diagnostics", "on_change"),
    desc = "pi-ide: mirror diagnostics in the host",
  })
  -- A renamed or wiped buffer changes which file its diagnostics belong to;
  -- a written one makes them about the file.
  autocmd({ "BufFilePost", "BufWipeout", "BufWritePost" }, {
    group = group,
    callback = lazy("pi-ide.diagnostics", "on_buffer"),
    desc = "pi-ide: mirror diagnostics in the host",
  })
  autocmd("LspDetach", {
    group = group,
    callback = lazy("pi-ide.diagnostics", "on_detach"),
    desc = "pi-ide: a server letting go of a buffer is no news about its file",
  })
  if values.watch_files then
    install_file_watch(group)
  end
  local suggestion = values.suggestion
  if not suggestion.enabled and not vim.tbl_contains(vim.tbl_values(suggestion.filetypes), true) then
    return
  end
  autocmd({ "TextChangedI", "CursorMovedI" }, {
    group = group,
    callback = lazy("pi-ide.suggest", "on_typing"),
    desc = "pi-ide: follow typing, debounce suggestions",
  })
  autocmd({ "InsertLeave", "BufLeave", "CursorMoved" }, {
    group = group,
    callback = lazy("pi-ide.suggest", "on_leave"),
    desc = "pi-ide: cancel and hide suggestions",
  })
  autocmd({ "CompleteChanged", "CompleteDone" }, {
    group = group,
    callback = lazy("pi-ide.suggest", "on_menu"),
    desc = "pi-ide: hide ghost text behind the completion menu",
  })
  autocmd("User", {
    group = group,
    pattern = { "BlinkCmpMenuOpen", "BlinkCmpMenuClose" },
    callback = lazy("pi-ide.suggest", "on_menu"),
    desc = "pi-ide: hide ghost text behind blink.cmp's menu",
  })
  autocmd("InsertEnter", {
    group = group,
    once = true,
    callback = function()
      require("pi-ide.suggest").map_keys(suggestion.keymaps)
    end,
    desc = "pi-ide: suggestion keys",
  })
end

--- Applies options, installs autocmds and (by default) starts the host.
---@param opts? pi-ide.Config
function M.setup(opts)
  -- Nothing starts on an older Neovim: the host's Lua side uses 0.11 APIs
  -- (4-argument str_utfindex, client:request) and would fail half-way.
  if vim.fn.has("nvim-0.11") ~= 1 then
    vim.notify(
      ("pi-ide: Neovim 0.11 or newer is required (this is %s); pi-ide.nvim is not started"):format(
        tostring(vim.version())
      ),
      vim.log.levels.ERROR,
      { title = "pi-ide" }
    )
    return
  end
  local values = require("pi-ide.config").apply(opts)
  local group = vim.api.nvim_create_augroup("PiIde", { clear = true })
  install_autocmds(group, values)
  require("pi-ide.mcp.roots").watch(group)
  vim.api.nvim_create_autocmd("DirChanged", {
    group = group,
    pattern = "global",
    callback = function()
      require("pi-ide.seam").notify("cwd", vim.fn.getcwd(), require("pi-ide.host").project_root())
    end,
    desc = "pi-ide: keep the lockfile's workspace folder and the context socket current",
  })
  if values.auto_start then
    -- The host (and the check that its binary exists, which names the
    -- command to run if not) waits until Neovim has started.
    start_after_vim_enter()
  end
end

--- Plain table: running, port, lockfile, pid, version, clients, diffs.
---@return pi-ide.Status
function M.status()
  return require("pi-ide.host").status()
end

function M.start()
  return require("pi-ide.host").start()
end

--- At-mention for Claude Code: `path`, lines `first`..`last` (1-based,
--- inclusive; nil for the whole file).
---@param path string
---@param first? integer
---@param last? integer
function M.mention(path, first, last)
  return require("pi-ide.mention").mention(path, first, last)
end

--- A short string for statuslines: connected agents, diffs waiting, an
--- open review ("" while the host is not running). Cheap enough for every
--- redraw: it is rebuilt only when one of those changes.
---@return string
function M.statusline()
  return require("pi-ide.statusline").get()
end

function M.stop()
  return require("pi-ide.host").stop()
end

function M.restart()
  return require("pi-ide.host").restart()
end

return M
