-- Starts and stops the Rust host and mirrors what it reports (port, clients)
-- so status() and statuslines never wait on RPC. What crosses between the
-- two is in lua/pi-ide/seam.lua.
local config = require("pi-ide.config")
local util = require("pi-ide.util")

local M = {}

local uv = vim.uv

local state = {
  job = nil, -- channel id of the running host
  stopping = false, -- true while a stop we asked for is in progress
  info = nil, -- what on_started reported
  socket = nil, -- path of pi's context socket, while there is one
  socket_error = nil, -- why there is none
  clients = {}, -- id -> { id, kind, name, pid }
  client_count = 0,
  sessions = {}, -- MCP endpoint ("MCP", "gemini", "qwen") -> open sessions
  stderr = {}, -- recent stderr lines, shown if the host dies
  failure = nil, -- why the host last failed to start or died, for :checkhealth
  restarted = false, -- an unexpected exit was restarted; the next one is not
}

-- Stderr lines kept: the host writes one line when start-up fails.
local STDERR_LINES = 20

--- What to run to get a host binary that matches this Lua code.
function M.install_hint()
  local by_hand = ("`cargo build --release --locked` in %s"):format(util.root())
  if config.values.bin then
    local replace = ("replace %s (option `bin`) with a build of this checkout (%s)"):format(config.values.bin, by_hand)
    return replace .. ", or drop option `bin` and run :PiIde install"
  end
  return ("run :PiIde install (it downloads the release's binary or builds one; by hand: %s)"):format(by_hand)
end

--- The lock directory the host will use and where that choice comes from,
--- or nil when there is none (no option, no $PI_IDE_LOCK_DIR, no home).
function M.lock_dir()
  if config.values.lock_dir then
    return vim.fn.expand(config.values.lock_dir), "option `lock_dir`"
  end
  local env = vim.env.PI_IDE_LOCK_DIR
  if env and env ~= "" then
    return env, "$PI_IDE_LOCK_DIR"
  end
  local home = uv.os_homedir()
  if home and home ~= "" then
    return home .. "/.pi/ide", "default"
  end
  return nil
end

--- `ide` in the directory `$env_name` names, else in `~/<dotdir>`; nil
--- without a home directory.
---@param env_name string
---@param dotdir string
---@return string?
local function ide_dir_in(env_name, dotdir)
  local dir = vim.env[env_name]
  if dir and dir ~= "" then
    return vim.fs.normalize(dir) .. "/ide"
  end
  local home = uv.os_homedir()
  return home and home ~= "" and (home .. "/" .. dotdir .. "/ide") or nil
end

--- Claude Code's lock directory (`$CLAUDE_CONFIG_DIR/ide`, else
--- `~/.claude/ide`), or nil when option `claude_code` is off.
function M.claude_lock_dir()
  if not config.values.claude_code then
    return nil
  end
  return ide_dir_in("CLAUDE_CONFIG_DIR", ".claude")
end

--- Gemini CLI's discovery directory: `os.tmpdir()`'s `gemini/ide` (Node's
--- tmpdir: $TMPDIR, $TMP, $TEMP, else /tmp), or nil when option `gemini` is off.
function M.gemini_dir()
  if not config.values.gemini then
    return nil
  end
  local tmp = "/tmp"
  for _, name in ipairs({ "TMPDIR", "TMP", "TEMP" }) do
    local value = vim.env[name]
    if value and value ~= "" then
      tmp = value
      break
    end
  end
  return vim.fs.normalize(tmp) .. "/gemini/ide"
end

--- Qwen Code's discovery directory: `$QWEN_HOME/ide` (default `~/.qwen`),
--- or nil when option `qwen` is off.
function M.qwen_dir()
  if not config.values.qwen then
    return nil
  end
  return ide_dir_in("QWEN_HOME", ".qwen")
end

--- The temporary directory Codex CLI looks for its IDE socket under
--- (Rust's temp_dir(): $TMPDIR, else /tmp), or nil when option `codex` is off.
function M.codex_tmpdir()
  if not config.values.codex then
    return nil
  end
  local tmp = vim.env.TMPDIR
  return vim.fs.normalize(tmp ~= nil and tmp ~= "" and tmp or "/tmp")
end

--- Codex's socket as the host serves it: `{tmpdir, socket, shared?,
--- shared_note?}` (`tmpdir` is the TMPDIR that leads Codex here), or nil.
function M.codex()
  local codex = state.info and state.info.codex
  if codex == nil or codex == vim.NIL then
    return nil
  end
  return {
    tmpdir = codex.tmpdir,
    socket = codex.socket,
    shared = codex.shared ~= vim.NIL and codex.shared or nil,
    shared_note = codex.shared_note ~= vim.NIL and codex.shared_note or nil,
  }
end

--- Whether the host keeps where the person is even with no client
--- connected: Codex asks for it before each prompt, over no connection.
function M.keeps_place()
  return M.codex() ~= nil
end

--- Why the host last failed to start or exited on its own, or nil.
function M.last_failure()
  return state.failure
end

--- Where a host binary may be, without the `bin` option: the one
--- :PiIde install downloaded, cargo's release and debug builds. The newest
--- of those that exist runs.
function M.candidates()
  local root = util.root()
  return { root .. "/bin/pi-ide", root .. "/target/release/pi-ide", root .. "/target/debug/pi-ide" }
end

--- Path of the host binary, or nil and the reason.
function M.binary()
  local wanted = config.values.bin
  if wanted then
    if vim.fn.executable(wanted) == 1 then
      return wanted
    end
    return nil, ("the host binary `%s` (option `bin`) is not executable"):format(wanted)
  end
  local best, best_mtime
  for _, path in ipairs(M.candidates()) do
    local stat = uv.fs_stat(path)
    if stat and (not best_mtime or stat.mtime.sec > best_mtime) then
      best, best_mtime = path, stat.mtime.sec
    end
  end
  if best then
    return best
  end
  return nil, "there is no host binary yet: " .. M.install_hint()
end

--- The project root: the git root of Neovim's cwd, else the cwd. pi's
--- context socket lives in its `.pi/ide/`.
function M.project_root()
  local cwd = vim.fn.getcwd()
  return vim.fs.root(cwd, ".git") or cwd
end

--- Where a fixed MCP port keeps its token across restarts.
function M.mcp_token_file()
  return vim.fn.stdpath("state") .. "/pi-ide/mcp-token"
end

-- Option mcp.session_idle_minutes as the host takes it: milliseconds, 0 =
-- never, and a positive value never rounded down to "never".
local function session_idle_ms(minutes)
  return minutes > 0 and math.max(1, math.floor(minutes * 60000 + 0.5)) or 0
end

function M.log_path()
  return vim.fn.stdpath("log") .. "/pi-ide.log"
end

function M.client_count()
  return state.client_count
end

--- Whether a client of `kind` ("pi" or "claude") is connected.
function M.has_client(kind)
  for _, client in pairs(state.clients) do
    if client.kind == kind then
      return true
    end
  end
  return false
end

--- Filetypes the host parses itself (others use Neovim's parsers).
function M.languages()
  return state.info and state.info.languages or {}
end

--- The RPC channel of the running host, or nil.
function M.channel()
  return state.job
end

local function add_stderr(line)
  if line ~= "" then
    table.insert(state.stderr, line)
    if #state.stderr > STDERR_LINES then
      table.remove(state.stderr, 1)
    end
  end
end

-- Signal names for the codes Neovim reports as 128 + signal.
local SIGNALS = { [1] = "SIGHUP", [2] = "SIGINT", [6] = "SIGABRT", [9] = "SIGKILL", [11] = "SIGSEGV", [15] = "SIGTERM" }

local function exit_reason(code)
  if code > 128 then
    local name = SIGNALS[code - 128]
    return ("killed by signal %d%s"):format(code - 128, name and (" " .. name) or "")
  end
  return ("exit code %d"):format(code)
end

local start

local function on_exit(_, code)
  -- Neovim ends its jobs as it quits: nothing to report then.
  local was_stopping = state.stopping or vim.v.exiting ~= vim.NIL
  local info = state.info or {}
  local had_started = state.info ~= nil
  state.job, state.stopping, state.info = nil, false, nil
  state.clients, state.client_count, state.sessions = {}, 0, {}
  require("pi-ide.diff").close_all()
  -- The host removes them itself; this covers a host that was killed.
  local files = { info.lockfile, info.claude_lockfile, state.socket }
  for _, announced in ipairs(info.companions or {}) do
    files[#files + 1] = announced.file
  end
  for _, file in ipairs(files) do
    if file and file ~= vim.NIL then
      os.remove(file)
    end
  end
  state.socket, state.socket_error = nil, nil
  require("pi-ide.cli_env").withdraw()
  util.emit("PiIdeStopped", { code = code })
  if was_stopping then
    return
  end
  -- Any exit Neovim did not ask for, even code 0, is a failure. A host
  -- that had started is started again once, on the port agents know; one
  -- that died during start-up would only fail again.
  local detail = #state.stderr > 0 and (":\n" .. table.concat(state.stderr, "\n")) or ""
  local again = had_started and not state.restarted
  state.failure = ("the host exited unexpectedly (%s)%s"):format(exit_reason(code), detail)
  local next_step = again and "starting it again" or ":PiIde start starts it again"
  util.notify(("%s\nits log: %s\n%s"):format(state.failure, M.log_path(), next_step), vim.log.levels.ERROR)
  if again then
    state.restarted = true
    vim.schedule(function()
      if not state.job then
        start(info.port)
      end
    end)
  end
end

-- Starts the host on WebSocket `port` (nil or 0: any free one).
start = function(port)
  if state.job then
    return true
  end
  local bin, problem = M.binary()
  if not bin then
    state.failure = problem
    util.notify(problem, vim.log.levels.ERROR)
    return false
  end
  local mcp = config.values.mcp
  local cmd = {
    bin,
    "--pid",
    tostring(vim.fn.getpid()),
    "--cwd",
    vim.fn.getcwd(),
    "--port",
    tostring(port or 0),
    "--root",
    M.project_root(),
    "--context-socket",
    config.values.context_socket.enabled and config.values.context_socket.name or "",
    "--log-file",
    M.log_path(),
    "--log-level",
    config.values.log_level,
    "--lock-dir",
    config.values.lock_dir and vim.fn.expand(config.values.lock_dir) or "",
    "--claude-lock-dir",
    M.claude_lock_dir() or "",
    "--mcp-port",
    mcp.enabled and tostring(mcp.port) or "",
    "--mcp-approve-edits",
    tostring(mcp.approve_edits),
    "--mcp-terminal-commands",
    tostring(mcp.terminal_commands),
    "--mcp-token-file",
    mcp.enabled and mcp.port ~= 0 and M.mcp_token_file() or "",
    "--mcp-session-idle-ms",
    tostring(session_idle_ms(mcp.session_idle_minutes)),
    "--gemini-dir",
    M.gemini_dir() or "",
    "--qwen-dir",
    M.qwen_dir() or "",
    "--codex-tmpdir",
    M.codex_tmpdir() or "",
  }
  state.stderr = {}
  local partial = ""
  local ok, job = pcall(vim.fn.jobstart, cmd, {
    rpc = true,
    -- Each call's first item continues the previous call's last one (a
    -- line arrives in pieces: the host's `pi-ide: ` and its error are two
    -- writes); the last item is unfinished, "" after a newline. { "" } is
    -- the end of the stream.
    on_stderr = function(_, data)
      if #data == 1 and data[1] == "" then
        add_stderr(partial)
        partial = ""
        return
      end
      data[1] = partial .. data[1]
      partial = table.remove(data)
      for _, line in ipairs(data) do
        add_stderr(line)
      end
    end,
    on_exit = on_exit,
  })
  if not ok or job <= 0 then
    state.failure = ("cannot start %s: %s"):format(bin, ok and job or tostring(job))
    util.notify(("%s\n%s"):format(state.failure, M.install_hint()), vim.log.levels.ERROR)
    return false
  end
  state.job = job
  return true
end

--- Starts the host; reports (never throws) why it cannot. A start asked
--- for by the person may be restarted once again after an unexpected exit.
function M.start()
  if not state.job then
    state.restarted = false
  end
  return start()
end

--- Asks the host to clean up and exit.
function M.stop()
  if not state.job then
    return false
  end
  state.stopping = true
  if not require("pi-ide.seam").notify("stop") then
    vim.fn.jobstop(state.job)
  end
  return true
end

-- Waits (bounded) until the host has exited.
local function wait_stopped()
  return vim.wait(2000, function()
    return state.job == nil
  end, 5)
end

function M.restart()
  if M.stop() then
    wait_stopped()
  end
  return M.start()
end

--- Seam `started`: the host listens and its lockfile exists. False (and the
--- host is stopped) when the binary speaks another seam version.
function M.on_started(info)
  local wanted = require("pi-ide.seam").VERSION
  if info.seam ~= wanted then
    state.failure = ("the host binary (seam %s) does not match this Lua code (seam %d)"):format(
      tostring(info.seam),
      wanted
    )
    util.notify(("%s: %s"):format(state.failure, M.install_hint()), vim.log.levels.ERROR)
    M.stop()
    return false
  end
  state.info, state.failure = info, nil
  local expected = require("pi-ide.install.release").version(util.root())
  if expected and info.version ~= expected then
    util.notify(
      ("the host binary is v%s but this plugin is v%s: %s"):format(tostring(info.version), expected, M.install_hint()),
      vim.log.levels.WARN
    )
  end
  if info.claude_error and info.claude_error ~= vim.NIL then
    util.notify(
      info.claude_error .. "\nClaude Code will not find Neovim; set $CLAUDE_CONFIG_DIR or fix that directory",
      vim.log.levels.WARN
    )
  end
  if info.mcp_error and info.mcp_error ~= vim.NIL then
    util.notify(info.mcp_error .. "\nMCP clients will not find Neovim; change option mcp.port", vim.log.levels.WARN)
  end
  if info.mcp_token_warning and info.mcp_token_warning ~= vim.NIL then
    util.notify(info.mcp_token_warning, vim.log.levels.WARN)
  end
  if info.companion_error and info.companion_error ~= vim.NIL then
    util.notify(info.companion_error .. "\nGemini CLI / Qwen Code will not find Neovim", vim.log.levels.WARN)
  end
  if info.codex_error and info.codex_error ~= vim.NIL then
    util.notify(info.codex_error .. "\nCodex CLI's /ide will not find Neovim", vim.log.levels.WARN)
  end
  require("pi-ide.cli_env").export(M.status())
  if M.keeps_place() then
    -- Codex asks before its first prompt: the host hears where you are now.
    require("pi-ide.selection").on_event()
  end
  util.emit("PiIdeStarted", { port = info.port, lockfile = info.lockfile })
  return true
end

--- Seam `socket`: where pi's context socket is now (nil: nowhere), or why
--- it could not be created.
function M.on_socket(path, err)
  state.socket = path ~= vim.NIL and path or nil
  err = err ~= vim.NIL and err or nil
  if err and err ~= state.socket_error then
    util.notify(err, vim.log.levels.WARN)
  end
  state.socket_error = err
end

--- Seam `client`: "connected", "initialized", "updated" (Claude's pid
--- arrived) or "disconnected".
function M.on_client(event, client)
  if event == "disconnected" then
    if state.clients[client.id] then
      state.clients[client.id] = nil
      state.client_count = state.client_count - 1
    end
    util.emit("PiIdeClientDisconnected", client)
    return
  end
  if not state.clients[client.id] then
    state.client_count = state.client_count + 1
  end
  state.clients[client.id] = client
  if event == "connected" then
    util.emit("PiIdeClientConnected", client)
  elseif client.kind == "claude" then
    -- Initialized: mentions made while no Claude agent was there.
    require("pi-ide.mention").flush()
  end
end

--- A plain table describing the host, its clients and the open diffs.
---@class pi-ide.Status
---@field running boolean
---@field port? integer The WebSocket's port.
---@field lockfile? string
---@field claude_lockfile? string
---@field socket? string pi's context socket.
---@field socket_error? string
---@field pid? integer The host's process.
---@field version? string
---@field mcp_url? string
---@field mcp_error? string
---@field mcp_token_file? string
---@field mcp_token_warning? string
---@field companions { client: "gemini"|"qwen", port: integer, file: string }[] Where Gemini CLI and Qwen Code look.
---@field companion_error? string
---@field codex? { tmpdir: string, socket: string, shared?: string, shared_note?: string } Codex CLI's /ide socket.
---@field codex_error? string
---@field clients { id: integer, kind: string, name?: string, pid?: integer }[]
---@field diffs { tab_name: string, path: string, client: string }[]
---@field sessions table<string, integer> Open MCP sessions by endpoint ("MCP", "gemini", "qwen").

---@return pi-ide.Status
function M.status()
  local clients = {}
  for _, client in pairs(state.clients) do
    clients[#clients + 1] = {
      id = client.id,
      kind = client.kind,
      name = client.name ~= vim.NIL and client.name or nil,
      pid = client.pid ~= vim.NIL and client.pid or nil,
    }
  end
  table.sort(clients, function(a, b)
    return a.id < b.id
  end)
  local diffs = {}
  for _, diff in ipairs(require("pi-ide.diff").list()) do
    diffs[#diffs + 1] = { tab_name = diff.tab_name, path = diff.path, client = diff.client }
  end
  local info = state.info or {}
  return {
    running = state.job ~= nil and state.info ~= nil,
    port = info.port,
    lockfile = info.lockfile,
    claude_lockfile = info.claude_lockfile ~= vim.NIL and info.claude_lockfile or nil,
    socket = state.socket,
    socket_error = state.socket_error,
    pid = info.pid,
    version = info.version,
    mcp_url = info.mcp_url ~= vim.NIL and info.mcp_url or nil,
    mcp_error = info.mcp_error ~= vim.NIL and info.mcp_error or nil,
    mcp_token_file = info.mcp_token_file ~= vim.NIL and info.mcp_token_file or nil,
    mcp_token_warning = info.mcp_token_warning ~= vim.NIL and info.mcp_token_warning or nil,
    companions = info.companions or {},
    companion_error = info.companion_error ~= vim.NIL and info.companion_error or nil,
    codex = M.codex(),
    codex_error = info.codex_error ~= vim.NIL and info.codex_error or nil,
    clients = clients,
    diffs = diffs,
    sessions = vim.deepcopy(state.sessions),
  }
end

--- Seam `sessions`: MCP endpoint `endpoint` has `open` sessions now.
---@param endpoint string
---@param open integer
function M.sessions(endpoint, open)
  state.sessions[endpoint] = open
end

--- The MCP endpoint, the lockfile that holds its bearer token and the file
--- that keeps that token (nil: a fresh one each start), or nil and why not.
--- The token itself never leaves the files: nothing may print or copy it.
---@return { url: string, lockfile: string, token_file?: string }|nil, string?
function M.mcp()
  local info = state.info
  if not (state.job and info) then
    return nil, "the host is not running (:PiIde start)"
  end
  if info.mcp_error and info.mcp_error ~= vim.NIL then
    return nil, info.mcp_error
  end
  if info.mcp_url == nil or info.mcp_url == vim.NIL then
    return nil, "the MCP endpoint is off (option mcp.enabled)"
  end
  local kept = info.mcp_token_file ~= vim.NIL and info.mcp_token_file or nil
  return { url = info.mcp_url, lockfile = info.lockfile, token_file = kept }
end

return M
