-- An install or build as a coroutine: it waits for each command it starts
-- without blocking Neovim (vim.system's callback resumes it) and reports
-- progress lines and its outcome.
local M = {}

---@class pi-ide.InstallTask
---@field progress fun(line: string, kind?: "step"|"output") a line to show; "output" = a command's own output
---@field run fun(cmd: string[], opts?: vim.SystemOpts): vim.SystemCompleted waits for `cmd`

--- Runs `body(task)` in a coroutine. `body` returns ok and a message;
--- `on_done(ok, message)` gets them, or false and the error `body` raised.
---@param body fun(task: pi-ide.InstallTask): boolean, string
---@param on_progress fun(line: string, kind: "step"|"output")
---@param on_done fun(ok: boolean, message: string)
function M.start(body, on_progress, on_done)
  local co
  local function resume(...)
    local ok, result, message = coroutine.resume(co, ...)
    if not ok then
      on_done(false, tostring(result))
    elseif coroutine.status(co) == "dead" then
      on_done(result == true, message or "")
    end
  end
  local task = {}
  function task.progress(line, kind)
    on_progress(line, kind or "step")
  end
  function task.run(cmd, opts)
    local started, err = pcall(vim.system, cmd, opts or { text = true }, function(result)
      vim.schedule(function()
        resume(result)
      end)
    end)
    if not started then
      -- The program is missing or cannot be executed.
      return { code = -1, signal = 0, stdout = "", stderr = tostring(err) }
    end
    return coroutine.yield()
  end
  co = coroutine.create(function()
    return body(task)
  end)
  resume()
end

return M
