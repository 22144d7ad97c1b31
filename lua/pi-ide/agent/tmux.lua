-- `agent.position = "tmux"`: when Neovim runs inside tmux, the agent gets
-- a pane of its own next to Neovim's, wired the same way (environment,
-- cwd). Every tmux command runs without blocking Neovim.
local M = {}

--- Whether Neovim runs inside tmux (and tmux can be run).
function M.available()
  return (vim.env.TMUX or "") ~= "" and vim.fn.executable("tmux") == 1
end

local function tmux(args, opts, on_done)
  local ok, err = pcall(vim.system, vim.list_extend({ "tmux" }, args), opts or {}, function(result)
    if on_done then
      vim.schedule(function()
        on_done(result)
      end)
    end
  end)
  if not ok and on_done then
    on_done({ code = -1, stdout = "", stderr = tostring(err) })
  end
end

--- Splits a pane off Neovim's running `cmd` (a list or a shell string) in
--- `cwd` with `env` added; `size` is a fraction of the window or a number
--- of columns. Calls `on_started(pane, pid)` or `on_failed(message)`.
function M.open(cmd, cwd, env, size, on_started, on_failed)
  local args = { "split-window", "-h", "-d", "-P", "-F", "#{pane_id} #{pane_pid}", "-c", cwd }
  if vim.env.TMUX_PANE and vim.env.TMUX_PANE ~= "" then
    vim.list_extend(args, { "-t", vim.env.TMUX_PANE })
  end
  vim.list_extend(args, { "-l", size > 1 and tostring(math.floor(size)) or (math.floor(size * 100 + 0.5) .. "%") })
  local names = vim.tbl_keys(env)
  table.sort(names)
  for _, name in ipairs(names) do
    vim.list_extend(args, { "-e", name .. "=" .. env[name] })
  end
  if type(cmd) == "table" then
    vim.list_extend(args, cmd)
  else
    args[#args + 1] = cmd
  end
  tmux(args, { text = true }, function(result)
    local pane, pid = (result.stdout or ""):match("^(%%%d+) (%d+)")
    if result.code == 0 and pane then
      on_started(pane, tonumber(pid))
    else
      on_failed(vim.trim(result.stderr or "") ~= "" and vim.trim(result.stderr) or ("tmux exited " .. result.code))
    end
  end)
end

--- Makes `pane` the active one (its window too). `on_gone()` when it
--- no longer exists.
function M.focus(pane, on_gone)
  tmux({ "select-window", "-t", pane }, {}, function(result)
    if result.code ~= 0 then
      if on_gone then
        on_gone()
      end
      return
    end
    tmux({ "select-pane", "-t", pane })
  end)
end

--- Pastes `text` into `pane` (bracketed when the program there asked for
--- it), then presses Enter when `enter`.
function M.paste(pane, text, enter)
  local buffer = "pi-ide-ask"
  tmux({ "load-buffer", "-b", buffer, "-" }, { stdin = text }, function(result)
    if result.code ~= 0 then
      return
    end
    tmux({ "paste-buffer", "-p", "-d", "-b", buffer, "-t", pane }, {}, function()
      if enter then
        tmux({ "send-keys", "-t", pane, "Enter" })
      end
    end)
  end)
end

--- Closes `pane` and what runs in it, waiting a moment (Neovim quits).
function M.kill(pane)
  pcall(function()
    vim.system({ "tmux", "kill-pane", "-t", pane }):wait(500)
  end)
end

return M
