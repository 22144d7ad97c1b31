-- The agent terminals: Claude Code, pi or an agent of your own, each in a
-- terminal of this Neovim (or a tmux pane beside it), started in its
-- working directory and wired to it (Claude connects by itself through
-- CLAUDE_CODE_SSE_PORT; pi gets this plugin's extensions). Several may run
-- at once; hiding a window keeps its agent running, and each stops when it
-- exits or Neovim quits. specs.lua says what each agent is, window.lua and
-- tmux.lua where it shows, ask.lua what `:PiIde ask` types into it.
local config = require("pi-ide.config")
local specs = require("pi-ide.agent.specs")
local tmux = require("pi-ide.agent.tmux")
local util = require("pi-ide.util")
local window = require("pi-ide.agent.window")

local M = {}

M.NAMES = specs.BUILTIN

-- How long an agent that needs the host waits for it to start.
M.HOST_WAIT_MS = 10000

---@class pi_ide.Agent
---@field id integer
---@field name string
---@field label string "claude", then "claude#2", ...
---@field kind "claude"|"pi"|"gemini"|"qwen"|"codex"|"opencode"|"other"
---@field job integer? the terminal's channel (nil in tmux)
---@field pid integer?
---@field buf integer? the terminal buffer (nil in tmux)
---@field pane string? the tmux pane ("%3")
---@field stopping boolean? its exit code says nothing: we stopped it
---@field server integer? opencode: the port of its server, which the host follows

---@type pi_ide.Agent[]
local running = {}
local next_id = 0
-- The agent the person used last: what `ask` and `status()` mean.
local last = nil
-- Launches waiting for the host: { name, args, focus }.
local waiting = {}

--- The program an agent's command runs (what must be executable).
function M.program(name)
  return specs.program(name)
end

--- How to install agent `name`: its install commands, quoted, the one to
--- use today first; nil for an agent of the config's own.
---@return string?
function M.install_hint(name)
  return specs.install_hint(name)
end

M.no_proxy = specs.no_proxy

--- Every agent name `:PiIde agent` knows.
function M.names()
  return specs.names()
end

local function forget(agent)
  for i, each in ipairs(running) do
    if each == agent then
      table.remove(running, i)
      break
    end
  end
  if last == agent then
    last = running[#running]
  end
end

local function label_for(name)
  local taken = {}
  for _, agent in ipairs(running) do
    taken[agent.label] = true
  end
  if not taken[name] then
    return name
  end
  local n = 2
  while taken[name .. "#" .. n] do
    n = n + 1
  end
  return name .. "#" .. n
end

-- Agent `agent` ended: the host stops following its server too.
local function gone(agent)
  forget(agent)
  if agent.server then
    require("pi-ide.seam").notify("opencode_forget", agent.id)
    agent.server = nil
  end
end

local function on_exit(agent, code)
  -- Before the buffer goes: wiping it marks the agent as stopped.
  local stopping = agent.stopping
  gone(agent)
  local buf = agent.buf
  if buf and vim.api.nvim_buf_is_valid(buf) then
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      window.close(win, buf)
    end
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
  end
  if code ~= 0 and not stopping then
    util.notify(("%s exited with code %d"):format(agent.label, code), vim.log.levels.WARN)
  end
end

local function stop_all()
  for _, agent in ipairs(vim.list_slice(running)) do
    agent.stopping = true
    if agent.job then
      vim.fn.jobstop(agent.job)
    elseif agent.pane then
      tmux.kill(agent.pane)
    end
  end
end

-- Whether a diff of MCP edit `group` is still waiting for the person.
local function group_waits(group)
  for _, diff in ipairs(require("pi-ide.diff").list()) do
    if diff.group == group then
      return true
    end
  end
  return false
end

-- Goes back to the agent that proposed a diff the person just decided: the
-- one whose connection it came over (WebSocket), or whose process asked
-- for the edit (MCP), once the edit's last file is decided.
local function after_diff(args)
  local data = args.data or {}
  if not config.values.agent.focus_after_diff or data.accepted == nil then
    return
  end
  if data.group ~= nil and group_waits(data.group) then
    return
  end
  local match = require("pi-ide.agent.match")
  local agent
  if data.client_id ~= nil then
    agent = match.agent_of_client(data.client_id, running)
  elseif data.pid ~= nil then
    agent = match.agent_of_pid(data.pid, running)
  end
  if agent then
    -- After the diff's tab has gone.
    vim.schedule(function()
      M.enter(agent)
    end)
  end
end

local function watch_once()
  local group = vim.api.nvim_create_augroup("PiIdeAgent", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = stop_all,
    desc = "pi-ide: stop the agents with Neovim",
  })
  vim.api.nvim_create_autocmd("User", {
    group = group,
    pattern = "PiIdeDiffClosed",
    callback = after_diff,
    desc = "pi-ide: back to the agent that proposed the diff",
  })
  watch_once = function() end
end

local function tell_how_to_connect(agent)
  if agent.kind == "pi" then
    util.notify(
      ("%s runs in the agent terminal: type /ide in it and pick Neovim for reviewed edits"):format(agent.label)
    )
  elseif agent.kind == "gemini" or agent.kind == "qwen" then
    local announced = require("pi-ide.host")[agent.kind .. "_dir"]()
    local message = announced
        and "%s runs in the agent terminal: `/ide enable` in it (once) connects it, `/ide status` shows it"
      or "%s runs, but cannot connect: Neovim is not announced to it (option %s = false)"
    util.notify(message:format(agent.label, agent.kind), not announced and vim.log.levels.WARN or nil)
  elseif agent.kind == "codex" then
    local host = require("pi-ide.host")
    if not host.codex() then
      util.notify(
        ("%s runs, but its /ide cannot find Neovim: Codex's socket is not served (option codex)"):format(agent.label),
        vim.log.levels.WARN
      )
    else
      util.notify(("%s runs in the agent terminal: /ide in it gives it your file and selection"):format(agent.label))
    end
  elseif agent.kind == "opencode" and not require("pi-ide.host").claude_lock_dir() then
    -- opencode reads Claude Code's lockfiles (~/.claude/ide).
    util.notify(
      ("%s runs, but cannot connect: Neovim is not in Claude Code's lockfiles (option claude_code = false)"):format(
        agent.label
      ),
      vim.log.levels.WARN
    )
  elseif agent.kind == "claude" and not require("pi-ide.host").claude_lock_dir() then
    -- Claude reads the token from our lockfile in its own directory.
    util.notify(
      ("%s runs, but cannot connect: Neovim is not announced to Claude Code (option claude_code = false)"):format(
        agent.label
      ),
      vim.log.levels.WARN
    )
  end
end

-- The new agent's terminal buffer: named, listed, typed.
local function name_buffer(agent)
  local buf = agent.buf
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].buflisted = true
  pcall(vim.api.nvim_buf_set_name, buf, "pi-ide://agent/" .. agent.label)
  vim.bo[buf].filetype = "pi-ide-agent"
  vim.b[buf].pi_ide_agent = agent.name
  vim.b[buf].pi_ide_agent_label = agent.label
  vim.api.nvim_create_autocmd("BufUnload", {
    group = vim.api.nvim_create_augroup("PiIdeAgent" .. agent.id, { clear = true }),
    buffer = buf,
    once = true,
    callback = function()
      -- Wiping the terminal stops the agent on purpose.
      agent.stopping = true
    end,
    desc = "pi-ide: the agent's terminal goes",
  })
end

-- How often the processes of agents in tmux panes are looked at: tmux
-- does not tell Neovim when a pane's program ends.
M.PANE_CHECK_MS = 1000
local pane_timer = nil

-- Whether process `pid` has ended: gone, or a zombie its parent has not
-- reaped yet (signal 0 still reaches one; Linux's /proc tells them apart).
local function ended(pid)
  local _, _, name = vim.uv.kill(pid, 0)
  if name == "ESRCH" then
    return true
  end
  local fd = vim.uv.fs_open(("/proc/%d/stat"):format(pid), "r", 0)
  if not fd then
    return false
  end
  local stat = vim.uv.fs_read(fd, 512, 0) or ""
  vim.uv.fs_close(fd)
  -- `pid (name) S ...`: the state follows the last parenthesis.
  return stat:match(".*%) (%a)") == "Z"
end

-- Forgets the agents in tmux panes whose process has ended; stops looking
-- when none is left.
local function check_panes()
  local left = 0
  for _, agent in ipairs(vim.list_slice(running)) do
    if agent.pane and agent.pid then
      if ended(agent.pid) then
        on_exit(agent, 0)
      else
        left = left + 1
      end
    end
  end
  if left == 0 and pane_timer then
    pane_timer:stop()
    pane_timer:close()
    pane_timer = nil
  end
end

local function watch_panes()
  if pane_timer then
    return
  end
  pane_timer = assert(vim.uv.new_timer())
  pane_timer:start(M.PANE_CHECK_MS, M.PANE_CHECK_MS, vim.schedule_wrap(check_panes))
end

local function in_terminal(agent, spec, cmd, opts, focus, on_started)
  local buf = vim.api.nvim_create_buf(false, false)
  local win = window.open(buf, agent.label)
  opts.on_exit = function(_, code)
    on_exit(agent, code)
  end
  local ok, job = pcall(vim.api.nvim_win_call, win, function()
    if vim.fn.has("nvim-0.11") == 1 then
      opts.term = true
      return vim.fn.jobstart(cmd, opts)
    end
    return vim.fn.termopen(cmd, opts)
  end)
  if not ok or job <= 0 then
    window.close(win, buf)
    pcall(vim.api.nvim_buf_delete, buf, { force = true })
    util.notify(
      ("cannot start %s: %s"):format(spec.name, ok and ("jobstart returned " .. job) or job),
      vim.log.levels.ERROR
    )
    return false
  end
  agent.job, agent.pid, agent.buf = job, vim.fn.jobpid(job), buf
  running[#running + 1], last = agent, agent
  name_buffer(agent)
  on_started()
  if focus then
    window.enter(win)
  end
  return true
end

local function in_tmux(agent, spec, cmd, opts, focus, on_started)
  running[#running + 1], last = agent, agent
  tmux.open(cmd, opts.cwd, opts.env, config.values.agent.size, function(pane, pid)
    agent.pane, agent.pid = pane, pid
    on_started()
    watch_panes()
    if focus then
      tmux.focus(pane)
    end
  end, function(message)
    forget(agent)
    util.notify(("cannot start %s in tmux: %s"):format(spec.name, message), vim.log.levels.ERROR)
  end)
  return true
end

-- A free loopback port, or nil (the agent then picks its own).
local function free_port()
  local tcp = vim.uv.new_tcp()
  if not tcp then
    return nil
  end
  local ok = tcp:bind("127.0.0.1", 0)
  local name = ok and tcp:getsockname()
  tcp:close()
  return name and name.port or nil
end

-- What a launch of `spec` chooses itself: opencode's server port and the
-- password it answers to, when its edits are reviewed here.
local function choose(spec)
  if spec.kind ~= "opencode" or not spec.review then
    return {}
  end
  local port = free_port()
  local bytes = vim.uv.random(16)
  if not port or not bytes then
    util.notify("cannot pick a port for opencode's server: its edits are not reviewed here", vim.log.levels.WARN)
    return {}
  end
  local password = bytes:gsub(".", function(c)
    return ("%02x"):format(c:byte())
  end)
  return { port = port, password = password }
end

-- The host follows opencode's server at the port `launch` chose, while
-- its process runs.
local function follow(agent, launch, cwd)
  if launch.port then
    agent.server = launch.port
    require("pi-ide.seam").notify("opencode_follow", {
      id = agent.id,
      port = launch.port,
      password = launch.password,
      cwd = cwd,
      pid = agent.pid,
    })
  end
end

-- Starts agent `spec` with `args`; the host is running if it must be.
local function launch(spec, args, focus)
  watch_once()
  -- (Without a host, which was told already, there is none to take it.)
  if config.values.agent.baseline and require("pi-ide.host").channel() then
    -- Before the agent can write anything; a baseline with changes not
    -- reviewed yet (another agent's) stays.
    require("pi-ide.changes").start({ keep = true, quiet = true })
  end
  local status = require("pi-ide.host").status()
  next_id = next_id + 1
  local agent = { id = next_id, name = spec.name, label = label_for(spec.name), kind = spec.kind }
  local chosen = choose(spec)
  local cmd = specs.command(spec, args, status, chosen)
  local opts = { cwd = vim.fn.getcwd(-1, -1), env = specs.environment(spec, status, chosen) }
  local function on_started()
    follow(agent, chosen, opts.cwd)
  end
  local ok
  if config.values.agent.position == "tmux" and tmux.available() then
    ok = in_tmux(agent, spec, cmd, opts, focus, on_started)
  else
    if config.values.agent.position == "tmux" then
      util.notify("agent.position = tmux, but Neovim does not run inside tmux: opening a window instead")
    end
    ok = in_terminal(agent, spec, cmd, opts, focus, on_started)
  end
  if ok then
    tell_how_to_connect(agent)
  end
  return ok
end

-- Runs the waiting launches once the host listens (it knows the port and
-- the MCP endpoint), without blocking; a timer bounds the wait.
local function launch_when_ready(spec, args, focus)
  local host = require("pi-ide.host")
  if not host.channel() and not host.start() then
    util.notify(
      ("%s not started: it needs the pi-ide host, which cannot start (see above; :checkhealth pi-ide)"):format(
        spec.name
      ),
      vim.log.levels.ERROR
    )
    return false
  end
  local pending = { spec = spec, args = args, focus = focus }
  waiting[#waiting + 1] = pending
  if #waiting > 1 then
    return true
  end
  local group = vim.api.nvim_create_augroup("PiIdeAgentWait", { clear = true })
  local timer = assert(vim.uv.new_timer())
  local function finish()
    local all = waiting
    waiting = {}
    pcall(vim.api.nvim_del_augroup_by_id, group)
    timer:stop()
    timer:close()
    return all
  end
  local function give_up(why)
    for _, each in ipairs(finish()) do
      util.notify(("%s not started: %s"):format(each.spec.name, why), vim.log.levels.ERROR)
    end
  end
  vim.api.nvim_create_autocmd("User", {
    group = group,
    pattern = "PiIdeStarted",
    once = true,
    callback = function()
      local all = finish()
      -- Out of the host's call into Lua, which is waiting for this.
      vim.schedule(function()
        for _, each in ipairs(all) do
          launch(each.spec, each.args, each.focus)
        end
      end)
    end,
  })
  vim.api.nvim_create_autocmd("User", {
    group = group,
    pattern = "PiIdeStopped",
    once = true,
    callback = function()
      give_up("the pi-ide host stopped while starting (:PiIde status)")
    end,
  })
  timer:start(
    M.HOST_WAIT_MS,
    0,
    vim.schedule_wrap(function()
      if #waiting > 0 then
        give_up(("the pi-ide host did not start within %d s (:checkhealth pi-ide)"):format(M.HOST_WAIT_MS / 1000))
      end
    end)
  )
  return true
end

local function start(name, args, focus)
  local spec = specs.get(name)
  if not spec then
    util.notify(
      ("unknown agent %q; try %s (or add it to option agent.agents)"):format(
        tostring(name),
        table.concat(specs.names(), ", ")
      ),
      vim.log.levels.ERROR
    )
    return false
  end
  local program = specs.program(name)
  if vim.fn.executable(program) ~= 1 then
    local hint = specs.install_hint(name)
    local option = vim.tbl_contains(specs.BUILTIN, name) and name or ("agents." .. name)
    util.notify(
      ("`%s` is not executable: %sset the option agent.%s.cmd"):format(
        program,
        hint and ("install it with " .. hint .. ", or ") or "",
        option
      ),
      vim.log.levels.ERROR
    )
    return false
  end
  local host = require("pi-ide.host")
  if host.status().running then
    return launch(spec, args, focus)
  end
  if specs.needs_host(spec) then
    return launch_when_ready(spec, args, focus)
  end
  if not host.channel() and not host.start() then
    util.notify(("%s starts, but cannot find this Neovim until the host runs (see above)"):format(name))
  end
  return launch(spec, args, focus)
end

--- Shows agent `agent` and, with `focus`, enters it.
local function reveal(agent, focus)
  last = agent
  if agent.pane then
    tmux.focus(agent.pane, function()
      gone(agent)
      util.notify(("%s's tmux pane is gone"):format(agent.label), vim.log.levels.WARN)
    end)
    return true
  end
  local win = window.in_tab(agent.buf) or window.open(agent.buf, agent.label)
  if focus then
    window.enter(win)
  end
  return true
end

--- Enters agent `agent`'s terminal: its window in this tab, else in
--- another tab, else a new one (its tmux pane in tmux).
function M.enter(agent)
  if agent.buf and not window.in_tab(agent.buf) then
    local win = vim.fn.win_findbuf(agent.buf)[1]
    if win then
      vim.api.nvim_set_current_tabpage(vim.api.nvim_win_get_tabpage(win))
    end
  end
  return reveal(agent, true)
end

local function latest_named(name)
  for i = #running, 1, -1 do
    if running[i].name == name then
      return running[i]
    end
  end
  return nil
end

-- The agent the current window shows, if any.
local function current()
  local buf = vim.api.nvim_get_current_buf()
  for _, agent in ipairs(running) do
    if agent.buf == buf then
      return agent
    end
  end
  return nil
end

--- Lets the person pick one of the running agents; `on_choice(agent)`.
function M.pick(on_choice)
  vim.ui.select(vim.list_slice(running), {
    prompt = "Agent",
    format_item = function(agent)
      return ("%s (pid %s%s)"):format(agent.label, agent.pid or "?", agent.pane and (", tmux " .. agent.pane) or "")
    end,
  }, function(agent)
    if agent then
      on_choice(agent)
    end
  end)
end

-- Makes agent `name` (default: the one running, else agent.default) run
-- and show; `focus` also enters it; `args` go to a new one.
local function open(name, focus, args)
  if name ~= nil and not specs.get(name) then
    return start(name, args, focus)
  end
  if name == nil then
    if #running == 0 then
      return start(config.values.agent.default, args, focus)
    end
    if #running > 1 and focus then
      M.pick(function(agent)
        reveal(agent, true)
      end)
      return true
    end
    return reveal(last or running[#running], focus)
  end
  local agent = latest_named(name)
  if not agent then
    for _, pending in ipairs(waiting) do
      if pending.spec.name == name then
        pending.focus = pending.focus or focus
        return true
      end
    end
    return start(name, args, focus)
  end
  if args and #args > 0 then
    util.notify(
      ("%s already runs; :PiIde agent new %s %s starts another with those arguments"):format(
        agent.label,
        name,
        table.concat(args, " ")
      ),
      vim.log.levels.WARN
    )
  end
  return reveal(agent, focus)
end

--- Shows agent `name`'s terminal (starting it with `args` if none of that
--- name runs), cursor kept.
function M.show(name, args)
  return open(name, false, args)
end

--- Shows an agent's terminal and enters it in terminal mode; with several
--- running and no name, asks which.
function M.focus(name, args)
  return open(name, true, args)
end

--- Starts another agent `name` (default: agent.default) with `args`, even
--- when one of that name runs, and enters it.
function M.new(name, args)
  return start(name or config.values.agent.default, args, true)
end

--- Closes the agents' windows in this tab; they keep running.
function M.hide()
  for _, agent in ipairs(running) do
    local win = agent.buf and window.in_tab(agent.buf)
    while win do
      window.close(win, agent.buf)
      win = window.in_tab(agent.buf)
    end
  end
end

--- Hides the agent terminal you are in (or the only one showing), else
--- shows and enters one (starting agent `name`, or the default).
function M.toggle(name)
  local target = current()
  if not target and name then
    target = latest_named(name)
  elseif not target and #running == 1 then
    target = running[1]
  end
  if target and target.buf and (name == nil or target.name == name) then
    local win = window.in_tab(target.buf)
    if win then
      while win do
        window.close(win, target.buf)
        win = window.in_tab(target.buf)
      end
      return true
    end
  end
  return open(name, true)
end

--- The last used agent's job (channel id), or nil.
function M.job()
  return last and last.job or nil
end

local function describe(agent)
  return {
    id = agent.id,
    server = agent.server,
    name = agent.name,
    label = agent.label,
    kind = agent.kind,
    pid = agent.pid,
    job = agent.job,
    buf = agent.buf,
    pane = agent.pane,
    visible = agent.pane ~= nil or (agent.buf ~= nil and window.in_tab(agent.buf) ~= nil),
  }
end

--- `{name, label, kind, pid, job, buf, pane, visible}` of the last used
--- agent, or nil when none runs.
function M.status()
  return last and describe(last) or nil
end

--- The same for every running agent, oldest first.
function M.list()
  return vim.tbl_map(describe, running)
end

--- The agent `:PiIde ask` types into: the one you are in, else the last used.
function M.target()
  return current() or last
end

return M
