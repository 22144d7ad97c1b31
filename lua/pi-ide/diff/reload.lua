-- After an accepted diff the agent writes the file. Reload the buffer that
-- shows it (the reload every buffer shares: follow/reload.lua), unless the
-- person has unsaved edits there: those are kept and the person is told.
-- With option `watch_files` the host's watch does this for every buffer.
local util = require("pi-ide.util")

local M = {}

-- How long to wait for the agent's write.
local WATCH_MS = 60000

-- Reloads `buf` from disk keeping each window's view, or keeps unsaved edits.
local function reload(buf, path)
  if not vim.api.nvim_buf_is_valid(buf) or not vim.api.nvim_buf_is_loaded(buf) then
    return
  end
  if require("pi-ide.follow.reload").sync(buf) == "conflict" then
    util.notify(
      ("%s changed on disk (written by the agent); your unsaved changes are kept. `:e!` loads the new version"):format(
        vim.fn.fnamemodify(path, ":~:.")
      ),
      vim.log.levels.WARN
    )
  end
end

--- Watches `path` until the agent writes it, then reloads its buffer.
function M.watch(path)
  local buf = util.file_buffer(path)
  if not buf or (require("pi-ide.config").values.watch_files and require("pi-ide.follow").watchable(buf)) then
    return
  end
  require("pi-ide.follow.paths").watch(path, function()
    reload(buf, path)
  end, { once = true, timeout_ms = WATCH_MS })
end

return M
