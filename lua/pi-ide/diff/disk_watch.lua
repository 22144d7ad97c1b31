-- Tells when a file changes on disk. Writes arrive as truncate + write, so
-- the callback runs once the file has been quiet for a moment.
local M = {}

local uv = vim.uv

local SETTLE_MS = 30

--- Calls `on_change()` on the main loop after each settled change to `path`
--- (just the first one with `once`), until `timeout_ms` passes (if given) or
--- the returned stop function is called.
function M.watch(path, on_change, opts)
  opts = opts or {}
  local watcher, settle = uv.new_fs_event(), uv.new_timer()
  local deadline = opts.timeout_ms and uv.new_timer() or nil
  local function stop()
    for _, handle in ipairs({ watcher, settle, deadline }) do
      if handle and not handle:is_closing() then
        handle:close()
      end
    end
  end
  local base = vim.fs.basename(path)
  local ok = watcher:start(vim.fs.dirname(path), {}, function(err, name)
    if err or name == base then
      settle:start(SETTLE_MS, 0, function()
        if opts.once then
          stop()
        end
        vim.schedule(on_change)
      end)
    end
  end)
  if not ok then
    stop()
    return stop
  end
  if deadline then
    deadline:start(opts.timeout_ms, 0, stop)
  end
  return stop
end

return M
