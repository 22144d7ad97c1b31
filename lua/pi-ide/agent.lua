-- The agent terminal: Claude Code or pi in a terminal window of this Neovim,
-- started in its working directory and wired to it (Claude connects by
-- itself through CLAUDE_CODE_SSE_PORT; pi is told to run /ide). One agent
-- runs at a time; hiding its window keeps it running, and it stops when it
-- exits or Neovim quits.
local config = require("pi-ide.config")
local util = require("pi-ide.util")

local M = {}

M.NAMES = { "claude", "pi" }

local INSTALL = {
  claude = "npm install -g @anthropic-ai/claude-code",
  pi = "npm install -g @mariozechner/pi-coding-agent",
}

-- How long Claude waits for a starting host before the person is told.
M.HOST_WAIT_MS = 10000

-- Loopback names every agent must dial directly, whatever http_proxy says.
local LOOPBACK = { "localhost", "127.0.0.1", "::1" }

local SPLITS = { right = "right", left = "left", bottom = "below", top = "above" }

local state = {
  name = nil, -- "claude" or "pi" while one runs
  job = nil, -- its channel id
  pid = nil,
  buf = nil, -- its terminal buffer
  stopping = false, -- we (or the person, wiping the buffer) stopped it: its exit code says nothing
  pending = nil, -- { name, focus } while Claude waits for the host to start
}

--- The program an agent's command runs (what must be executable).
function M.program(name)
  local cmd = config.values.agent[name].cmd
  if type(cmd) == "table" then
    return cmd[1]
  end
  for word in cmd:gmatch("%S+") do
    -- A shell command may start with variable assignments.
    if not word:match("^[%a_][%w_]*=") then
      return word
    end
  end
  return vim.trim(cmd)
end

--- The install command for agent `name`.
function M.install_hint(name)
  return INSTALL[name]
end

--- `no_proxy` and `NO_PROXY` joined, with the loopback names added once.
function M.no_proxy()
  local list, seen = {}, {}
  for _, value in ipairs({ vim.env.no_proxy or "", vim.env.NO_PROXY or "" }) do
    for entry in value:gmatch("[^,%s]+") do
      if not seen[entry] then
        seen[entry] = true
        list[#list + 1] = entry
      end
    end
  end
  if seen["*"] then
    -- Already no proxy for anything; `*` must stay alone to mean that.
    return "*"
  end
  for _, entry in ipairs(LOOPBACK) do
    if not seen[entry] then
      list[#list + 1] = entry
    end
  end
  return table.concat(list, ",")
end

-- What the agent's environment gets on top of Neovim's.
local function environment(name, port)
  local no_proxy = M.no_proxy()
  local env = { no_proxy = no_proxy, NO_PROXY = no_proxy }
  if name == "claude" then
    env.CLAUDE_CODE_SSE_PORT = tostring(port)
    env.ENABLE_IDE_INTEGRATION = "true"
    env.FORCE_CODE_TERMINAL = "true"
  end
  -- pi reads only $PI_IDE_LOCK_DIR; Neovim's own is inherited.
  local dir, source = require("pi-ide.host").lock_dir()
  if dir and source == "option `lock_dir`" then
    env.PI_IDE_LOCK_DIR = dir
  end
  return env
end

-- The window of the current tab showing the agent, if any.
local function window()
  if not state.buf then
    return nil
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == state.buf then
      return win
    end
  end
  return nil
end

-- `size` of `total` cells: a fraction, or a count when above 1.
local function cells(size, total)
  local n = size > 1 and math.floor(size) or math.floor(total * size + 0.5)
  return math.max(1, math.min(n, total - 2))
end

local function set_local(win, options)
  for option, value in pairs(options) do
    vim.api.nvim_set_option_value(option, value, { scope = "local", win = win })
  end
end

-- Opens a window on `buf` where the options say, without entering it.
local function open_window(buf, name)
  local opts = config.values.agent
  local win
  if opts.position == "float" then
    local columns, lines = vim.o.columns, vim.o.lines - vim.o.cmdheight
    local width = cells(opts.size, columns)
    local height = opts.size > 1 and math.max(1, lines - 4) or cells(opts.size, lines)
    win = vim.api.nvim_open_win(buf, false, {
      relative = "editor",
      width = width,
      height = height,
      row = math.floor((lines - height) / 2) - 1,
      col = math.floor((columns - width) / 2),
      border = "rounded",
      title = " " .. name .. " ",
      title_pos = "center",
    })
  else
    local vertical = opts.position == "right" or opts.position == "left"
    local split = { split = SPLITS[opts.position], win = -1 }
    if vertical then
      split.width = cells(opts.size, vim.o.columns)
    else
      split.height = cells(opts.size, vim.o.lines - vim.o.cmdheight)
    end
    win = vim.api.nvim_open_win(buf, false, split)
    set_local(win, { winfixwidth = vertical, winfixheight = not vertical })
  end
  set_local(win, { number = false, relativenumber = false, signcolumn = "no", foldcolumn = "0", spell = false })
  return win
end

-- Closes `win`; the last window of Neovim shows another buffer instead.
local function close_window(win)
  if pcall(vim.api.nvim_win_close, win, false) then
    return
  end
  vim.api.nvim_win_call(win, function()
    local alternate = vim.fn.bufnr("#")
    if alternate > 0 and alternate ~= state.buf and vim.fn.buflisted(alternate) == 1 then
      vim.cmd.buffer(alternate)
    else
      vim.cmd.enew()
    end
  end)
end

local function enter(win)
  vim.api.nvim_set_current_win(win)
  vim.cmd.startinsert()
end

local function on_exit(job, code)
  if job ~= state.job then
    return
  end
  local name, buf, stopping = state.name, state.buf, state.stopping
  state.name, state.job, state.pid, state.buf, state.stopping = nil, nil, nil, nil, false
  if buf and vim.api.nvim_buf_is_valid(buf) then
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      close_window(win)
    end
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
  end
  if code ~= 0 and not stopping then
    util.notify(("%s exited with code %d"):format(name, code), vim.log.levels.WARN)
  end
end

local function stop_on_quit()
  if state.job then
    state.stopping = true
    vim.fn.jobstop(state.job)
  end
end

-- Starts agent `name` in a new terminal window; the host is running.
local function launch(name, focus)
  local cmd = config.values.agent[name].cmd
  local port = require("pi-ide.host").status().port
  local buf = vim.api.nvim_create_buf(false, false)
  local win = open_window(buf, name)
  local opts = { cwd = vim.fn.getcwd(-1, -1), env = environment(name, port), on_exit = on_exit }
  local ok, job = pcall(vim.api.nvim_win_call, win, function()
    if vim.fn.has("nvim-0.11") == 1 then
      opts.term = true
      return vim.fn.jobstart(cmd, opts)
    end
    return vim.fn.termopen(cmd, opts)
  end)
  if not ok or job <= 0 then
    close_window(win)
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
    util.notify(("cannot start %s: %s"):format(name, ok and ("jobstart returned " .. job) or job), vim.log.levels.ERROR)
    return false
  end
  state.name, state.job, state.pid, state.buf, state.stopping = name, job, vim.fn.jobpid(job), buf, false
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].buflisted = false
  vim.b[buf].pi_ide_agent = name
  local group = vim.api.nvim_create_augroup("PiIdeAgent", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = stop_on_quit,
    desc = "pi-ide: stop the agent with Neovim",
  })
  vim.api.nvim_create_autocmd("BufUnload", {
    group = group,
    buffer = buf,
    callback = function()
      -- Wiping the terminal stops the agent on purpose.
      if state.buf == buf then
        state.stopping = true
      end
    end,
    desc = "pi-ide: the agent's terminal goes",
  })
  if focus then
    enter(win)
  end
  if name == "pi" then
    util.notify("pi runs in the agent terminal: type /ide in it and pick Neovim to connect it to this Neovim")
  elseif not require("pi-ide.host").claude_lock_dir() then
    -- Claude reads the token from our lockfile in its own directory.
    util.notify(
      "claude runs, but cannot connect: Neovim is not announced to Claude Code (option claude_code = false)",
      vim.log.levels.WARN
    )
  end
  return true
end

-- Starts Claude once the host is running (it needs the port), without
-- blocking: PiIdeStarted launches it, a timer bounds the wait.
local function launch_when_ready(name, focus)
  local host = require("pi-ide.host")
  if not host.channel() and not host.start() then
    util.notify(
      ("%s not started: it needs the pi-ide host, which cannot start (see above; :checkhealth pi-ide)"):format(name),
      vim.log.levels.ERROR
    )
    return false
  end
  local pending = { name = name, focus = focus }
  state.pending = pending
  local group = vim.api.nvim_create_augroup("PiIdeAgentWait", { clear = true })
  local timer = assert(vim.uv.new_timer())
  local function finish()
    state.pending = nil
    pcall(vim.api.nvim_del_augroup_by_id, group)
    timer:stop()
    timer:close()
  end
  vim.api.nvim_create_autocmd("User", {
    group = group,
    pattern = "PiIdeStarted",
    once = true,
    callback = function()
      finish()
      -- Out of the host's call into Lua, which is waiting for this.
      vim.schedule(function()
        launch(pending.name, pending.focus)
      end)
    end,
  })
  vim.api.nvim_create_autocmd("User", {
    group = group,
    pattern = "PiIdeStopped",
    once = true,
    callback = function()
      finish()
      util.notify(
        ("%s not started: the pi-ide host stopped while starting (:PiIde status)"):format(name),
        vim.log.levels.WARN
      )
    end,
  })
  timer:start(
    M.HOST_WAIT_MS,
    0,
    vim.schedule_wrap(function()
      if state.pending == pending then
        finish()
        util.notify(
          ("%s not started: the pi-ide host did not start within %d s (:checkhealth pi-ide)"):format(
            name,
            M.HOST_WAIT_MS / 1000
          ),
          vim.log.levels.ERROR
        )
      end
    end)
  )
  return true
end

local function start(name, focus)
  local program = M.program(name)
  if vim.fn.executable(program) ~= 1 then
    util.notify(
      ("`%s` is not executable: install it with `%s`, or set the option agent.%s.cmd"):format(
        program,
        INSTALL[name],
        name
      ),
      vim.log.levels.ERROR
    )
    return false
  end
  local host = require("pi-ide.host")
  if host.status().running then
    return launch(name, focus)
  end
  if name == "claude" then
    return launch_when_ready(name, focus)
  end
  -- pi connects only when the person runs /ide: it can start now.
  if not host.channel() and not host.start() then
    util.notify("pi starts, but /ide will not find this Neovim until the host runs (see above)", vim.log.levels.WARN)
  end
  return launch(name, focus)
end

-- Makes agent `name` (default: the running one, else agent.default) run and
-- show; `focus` also enters its window.
local function open(name, focus)
  if name ~= nil and not vim.tbl_contains(M.NAMES, name) then
    util.notify(("unknown agent %q; try claude or pi"):format(tostring(name)), vim.log.levels.ERROR)
    return false
  end
  local running = state.name or (state.pending and state.pending.name)
  if name and running and name ~= running then
    util.notify(
      ("%s already runs in the agent terminal (one at a time): quit it to start %s"):format(running, name),
      vim.log.levels.WARN
    )
  end
  if state.pending then
    state.pending.focus = state.pending.focus or focus
    return true
  end
  if not state.job then
    return start(name or config.values.agent.default, focus)
  end
  local win = window() or open_window(state.buf, state.name)
  if focus then
    enter(win)
  end
  return true
end

--- Shows the agent terminal (starting the agent if none runs), cursor kept.
function M.show(name)
  return open(name, false)
end

--- Shows the agent terminal and enters it in terminal mode.
function M.focus(name)
  return open(name, true)
end

--- Closes the agent's windows in this tab; the agent keeps running.
function M.hide()
  local win = window()
  while win do
    close_window(win)
    win = window()
  end
end

--- Hides the agent terminal when it shows in this tab, else shows and
--- enters it (starting agent `name`, or the default, if none runs).
function M.toggle(name)
  if window() and (name == nil or name == state.name) then
    M.hide()
    return true
  end
  return open(name, true)
end

--- The agent's job (channel id), or nil when none runs.
function M.job()
  return state.job
end

--- `{name, pid, job, buf, visible}` of the running agent, or nil.
function M.status()
  if not state.job then
    return nil
  end
  return { name = state.name, pid = state.pid, job = state.job, buf = state.buf, visible = window() ~= nil }
end

return M
