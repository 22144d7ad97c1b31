-- After an accepted diff the agent writes the file. Reload the buffer that
-- shows it, unless the person has unsaved edits there: those are kept and
-- the person is told.
local util = require("pi-ide.util")

local M = {}

-- How long to wait for the agent's write.
local WATCH_MS = 60000

-- Reloads `buf` from disk keeping each window's view, or keeps unsaved edits.
local function reload(buf, path)
  if not vim.api.nvim_buf_is_valid(buf) or not vim.api.nvim_buf_is_loaded(buf) then
    return
  end
  if vim.bo[buf].modified then
    util.notify(
      ("%s changed on disk (written by the agent); your unsaved changes are kept. `:e!` loads the new version"):format(
        vim.fn.fnamemodify(path, ":~:.")
      ),
      vim.log.levels.WARN
    )
    return
  end
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    views[win] = vim.api.nvim_win_call(win, vim.fn.winsaveview)
  end
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("silent keepalt keepjumps edit")
  end)
  for win, view in pairs(views) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_call(win, function()
        vim.fn.winrestview(view)
      end)
    end
  end
end

--- Watches `path` until the agent writes it, then reloads its buffer.
function M.watch(path)
  local buf = util.file_buffer(path)
  if not buf then
    return
  end
  require("pi-ide.diff.disk_watch").watch(path, function()
    reload(buf, path)
  end, { once = true, timeout_ms = WATCH_MS })
end

return M
