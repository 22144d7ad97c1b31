-- Public entry points: setup() and status(). See :help pi-ide.
local M = {}

local function start_after_vim_enter()
  local host = require("pi-ide.host")
  if vim.v.vim_did_enter == 1 then
    vim.schedule(host.start)
    return
  end
  vim.api.nvim_create_autocmd("VimEnter", {
    group = vim.api.nvim_create_augroup("PiIdeStart", { clear = true }),
    once = true,
    callback = function()
      vim.schedule(host.start)
    end,
  })
end

--- Applies options, installs autocmds and (by default) starts the host.
function M.setup(opts)
  if vim.fn.has("nvim-0.10") ~= 1 then
    vim.notify("pi-ide: Neovim 0.10 or newer is required; please upgrade Neovim", vim.log.levels.ERROR)
    return
  end
  local values = require("pi-ide.config").apply(opts)
  require("pi-ide.selection").setup(values.selection)
  require("pi-ide.suggest").setup(values.suggestion)
  local group = vim.api.nvim_create_augroup("PiIde", { clear = true })
  vim.api.nvim_create_autocmd("DirChanged", {
    group = group,
    pattern = "global",
    callback = function()
      require("pi-ide.host").notify("cwd", vim.fn.getcwd())
    end,
    desc = "pi-ide: keep the lockfile's workspace folder current",
  })
  if values.auto_start then
    local host = require("pi-ide.host")
    if not host.binary() then
      -- Say what to run now instead of failing later.
      local _, problem = host.binary()
      require("pi-ide.util").notify(problem, vim.log.levels.WARN)
      return
    end
    start_after_vim_enter()
  end
end

--- Plain table: running, port, lockfile, pid, version, clients, diffs.
function M.status()
  return require("pi-ide.host").status()
end

function M.start()
  return require("pi-ide.host").start()
end

function M.stop()
  return require("pi-ide.host").stop()
end

function M.restart()
  return require("pi-ide.host").restart()
end

return M
