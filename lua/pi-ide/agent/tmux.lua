-- `agent.position = "tmux"`: when Neovim runs inside tmux, the agent gets
-- a pane of its own next to Neovim's, wired the same way (environment,
-- cwd). Every tmux command runs without blocking Neovim. The environment
-- holds secrets (opencode's password, the MCP token), and a command line
-- is readable by every local user: it goes through a file only this user
-- can read, in Neovim's own temporary directory (0700), which the pane's
-- shell reads and removes before it runs the agent.
local M = {}

-- Reads the environment file "$1" and removes it, then runs the rest.
local PANE_SCRIPT = 'f=$1; shift; . "$f"; read=$?; rm -f "$f"; [ "$read" = 0 ] || exit 1; exec "$@"'

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

-- `env` as `export NAME='value'` lines in a new file only this user can
-- read; its path, or nil and why not.
local function env_file(env)
  local lines = {}
  local names = vim.tbl_keys(env)
  table.sort(names)
  for _, name in ipairs(names) do
    if not name:match("^[%a_][%w_]*$") then
      return nil, ("%q is not a name a shell can export"):format(name)
    end
    local value = tostring(env[name]):gsub("'", "'\\''")
    lines[#lines + 1] = ("export %s='%s'\n"):format(name, value)
  end
  local path = vim.fn.tempname()
  local fd, err = vim.uv.fs_open(path, "wx", tonumber("600", 8))
  if not fd then
    return nil, err
  end
  local written, write_err = vim.uv.fs_write(fd, table.concat(lines))
  vim.uv.fs_close(fd)
  if not written then
    vim.uv.fs_unlink(path)
    return nil, write_err
  end
  return path
end

--- Splits a pane off Neovim's running `cmd` (a list, or a string run by
--- 'shell') in `cwd` with `env` added; `size` is a fraction of the window
--- or a number of columns. Calls `on_started(pane, pid)` or
--- `on_failed(message)`.
function M.open(cmd, cwd, env, size, on_started, on_failed)
  local file, why = env_file(env)
  if not file then
    on_failed("cannot write the agent's environment: " .. tostring(why))
    return
  end
  local args = { "split-window", "-h", "-d", "-P", "-F", "#{pane_id} #{pane_pid}", "-c", cwd }
  if vim.env.TMUX_PANE and vim.env.TMUX_PANE ~= "" then
    vim.list_extend(args, { "-t", vim.env.TMUX_PANE })
  end
  vim.list_extend(args, { "-l", size > 1 and tostring(math.floor(size)) or (math.floor(size * 100 + 0.5) .. "%") })
  -- Several words: tmux runs them as they are, not through its shell.
  vim.list_extend(args, { "/bin/sh", "-c", PANE_SCRIPT, "sh", file })
  if type(cmd) == "table" then
    vim.list_extend(args, cmd)
  else
    vim.list_extend(args, { vim.o.shell, vim.o.shellcmdflag, cmd })
  end
  tmux(args, { text = true }, function(result)
    local pane, pid = (result.stdout or ""):match("^(%%%d+) (%d+)")
    if result.code == 0 and pane then
      on_started(pane, tonumber(pid))
    else
      -- No pane read it.
      vim.uv.fs_unlink(file)
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
