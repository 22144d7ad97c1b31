-- :checkhealth pi-ide. Tries what start-up will really do (which binary runs,
-- whether the lock directory can be created and written) and says why the
-- host is not running.
local M = {}

local uv = vim.uv

-- Says which binary runs when it is the debug build: after `cargo test` the
-- debug build is the newer one, and the newer one is what runs.
local function check_profile(host, bin)
  local root = require("pi-ide.util").root()
  local debug_bin = root .. "/target/debug/pi-ide"
  if bin ~= debug_bin then
    return
  end
  local others = vim.tbl_filter(function(path)
    return path ~= debug_bin and uv.fs_stat(path) ~= nil
  end, host.candidates())
  if #others == 0 then
    vim.health.warn(("the debug build %s will run: there is no release build"):format(debug_bin), {
      host.install_hint(),
    })
    return
  end
  vim.health.warn(
    ("the debug build %s will run: it is newer than %s"):format(debug_bin, table.concat(others, " and "))
      .. " (without the `bin` option the newest runs; `cargo test` rebuilds the debug one)",
    { ('to always run another one: setup({ bin = "%s" })'):format(others[1]) }
  )
end

-- How `bin` got there (downloaded, or built from source at a commit, and
-- why) and why it is the one that runs.
local function check_origin(host, bin)
  local record = require("pi-ide.install.record").read(bin)
  if record and record.source == "download" then
    vim.health.info(
      ("downloaded v%s for %s from %s (%s)"):format(record.version, record.target, record.url, record.installed)
    )
  elseif record and record.source == "cargo" then
    local at = type(record.commit) == "string" and ("at commit " .. record.commit:sub(1, 12)) or "from a copy"
    vim.health.info(("built from source %s (%s) because %s"):format(at, record.installed, record.reason))
  elseif bin:find("/target/[^/]+/pi%-ide$") then
    vim.health.info("built from source by cargo outside :PiIde install (the commit it was built at is not known)")
  end
  if require("pi-ide.config").values.bin then
    vim.health.info("it runs because option `bin` names it")
    return
  end
  local present = vim.tbl_filter(function(path)
    return uv.fs_stat(path) ~= nil
  end, host.candidates())
  if #present > 1 then
    vim.health.info(("it runs because it is the newest of %s"):format(table.concat(present, ", ")))
  end
  check_profile(host, bin)
end

-- Reports on the binary; true when it can run.
local function check_binary(host)
  local wanted = require("pi-ide.seam").VERSION
  local bin, problem = host.binary()
  if not bin then
    vim.health.error(problem)
    return false
  end
  local result = vim.system({ bin, "--version" }, { text = true }):wait(5000)
  local version, seam = (result.stdout or ""):match("^pi%-ide (%S+) seam (%d+)")
  if result.code ~= 0 or not seam then
    vim.health.error(("%s --version failed: %s"):format(bin, vim.trim(result.stderr or "")))
    return false
  elseif tonumber(seam) ~= wanted then
    vim.health.error(("%s is stale (seam %s, Lua expects %d)"):format(bin, seam, wanted), { host.install_hint() })
    return false
  end
  local expected = require("pi-ide.install.release").version(require("pi-ide.util").root())
  if expected and version ~= expected then
    vim.health.warn(("host binary %s is v%s, this plugin is v%s"):format(bin, version, expected), {
      host.install_hint(),
    })
  else
    vim.health.ok(("host binary %s (%s)"):format(bin, vim.trim(result.stdout)))
  end
  check_origin(host, bin)
  return true
end

-- The fixes for a lock directory the host cannot use; `culprit` is the path
-- in the way, `err` the error (a libuv name like "EACCES: …") when known,
-- `source` where the directory was chosen (see host.lock_dir()).
local function lock_dir_advice(culprit, err, source)
  local advice = {}
  if source == "option `lock_dir`" then
    advice[1] = "change the `lock_dir` option to a directory you can write, and start pi with"
      .. " PI_IDE_LOCK_DIR set to the same path (pi reads only that)"
  else
    advice[1] = "set PI_IDE_LOCK_DIR to a directory you can write, for both Neovim and pi (pi reads it"
      .. " too); or set the `lock_dir` option and start pi with PI_IDE_LOCK_DIR set to the same path"
  end
  if err and (err:match("^EACCES") or err:match("^EPERM")) then
    advice[#advice + 1] = ("or fix the permissions of %s"):format(culprit)
  elseif not err or err:match("^ENOTDIR") or err:match("^EEXIST") then
    advice[#advice + 1] = ("or move %s out of the way: it is not a directory"):format(culprit)
  end
  return advice
end

-- Creates and removes a file in `dir`, as the host does when it writes a
-- lockfile (a temp file renamed into place). Returns the error, if any.
local function try_file(dir)
  local path = ("%s/.pi-ide-health-%d.tmp"):format(dir, uv.os_getpid())
  local fd, err = uv.fs_open(path, "wx", 384) -- 0600, like the lockfile
  if not fd then
    return err
  end
  uv.fs_close(fd)
  uv.fs_unlink(path)
end

-- A lock directory that does not exist: the host creates it and its missing
-- parents (0700). Does the same, writes a file in it, and removes all of it.
-- `name` is `dir` as reported, `source` where it was chosen.
local function check_missing_lock_dir(dir, name, source)
  local missing, parent = { dir }, vim.fs.dirname(dir)
  local stat = uv.fs_stat(parent)
  while not stat and vim.fs.dirname(parent) ~= parent do
    table.insert(missing, 1, parent)
    parent = vim.fs.dirname(parent)
    stat = uv.fs_stat(parent)
  end
  if not stat or stat.type ~= "directory" then
    vim.health.error(
      ("lock directory %s cannot be created: %s is not a directory"):format(name, parent),
      lock_dir_advice(parent, nil, source)
    )
    return false
  end
  local created, err = {}, nil
  for _, path in ipairs(missing) do
    local ok, mkdir_err = uv.fs_mkdir(path, 448) -- 0700
    if not ok then
      err = mkdir_err
      break
    end
    created[#created + 1] = path
  end
  err = err or try_file(dir)
  for i = #created, 1, -1 do
    uv.fs_rmdir(created[i])
  end
  if err then
    vim.health.error(
      ("lock directory %s cannot be created in %s: %s"):format(name, parent, err),
      lock_dir_advice(parent, err, source)
    )
    return false
  end
  vim.health.ok(
    ("lock directory %s does not exist yet: the host will create it (0700) in %s, which is writable"):format(
      name,
      parent
    )
  )
  return true
end

-- Reports on the lock directory; true when the host can write its lockfile.
local function check_lock_dir(host)
  local dir, source = host.lock_dir()
  if not dir then
    vim.health.error("no lock directory: no `lock_dir` option, PI_IDE_LOCK_DIR or home directory", {
      "set PI_IDE_LOCK_DIR to a directory you can write, for both Neovim and pi",
    })
    return false
  end
  local name = source == "default" and dir or ("%s (%s)"):format(dir, source)
  local stat, stat_err, err_name = uv.fs_stat(dir)
  if not stat then
    if err_name == "ENOENT" or err_name == "ENOTDIR" then
      return check_missing_lock_dir(dir, name, source)
    end
    vim.health.error(
      ("lock directory %s cannot be used: %s"):format(name, stat_err),
      lock_dir_advice(dir, stat_err, source)
    )
    return false
  end
  if stat.type ~= "directory" then
    vim.health.error(("lock directory %s is not a directory"):format(name), lock_dir_advice(dir, nil, source))
    return false
  end
  local mode = bit.band(stat.mode, 511)
  local loose = bit.band(mode, 63) ~= 0
  if loose and stat.uid ~= uv.getuid() and uv.getuid() ~= 0 then
    vim.health.error(
      ("lock directory %s has mode %o and is not yours: the host cannot tighten it to 0700"):format(name, mode),
      lock_dir_advice(dir, "EPERM", source)
    )
    return false
  end
  local err = try_file(dir)
  if err then
    vim.health.error(
      ("lock directory %s: cannot create a file in it: %s"):format(name, err),
      lock_dir_advice(dir, err, source)
    )
    return false
  end
  if loose then
    vim.health.warn(("lock directory %s has mode %o; the host tightens it to 0700 on start"):format(name, mode))
  else
    vim.health.ok(("lock directory %s (mode %o, writable)"):format(name, mode))
  end
  return true
end

-- Reports on the host; `ready` says whether binary and lock directory are.
local function check_host(host, ready)
  local status = host.status()
  if status.running then
    vim.health.ok(
      ("host running on 127.0.0.1:%d, lockfile %s, %d client(s)"):format(status.port, status.lockfile, #status.clients)
    )
    return
  end
  local failure = host.last_failure()
  if failure then
    vim.health.error(
      "host not running: " .. failure,
      ready and { ":PiIde log shows what it did; :PiIde restart starts it again" }
        or { "fix what is reported above, then :PiIde restart" }
    )
  elseif host.channel() then
    vim.health.info("host starting")
  elseif not ready then
    vim.health.warn("host not running", { "fix what is reported above, then :PiIde start" })
  elseif vim.fn.exists("#PiIde") ~= 1 then
    vim.health.warn("host not running: require('pi-ide').setup() was not called", {
      'call require("pi-ide").setup({}) in your config (lazy.nvim: `opts = {}`)',
    })
  elseif require("pi-ide.config").values.auto_start then
    vim.health.warn("host not running (stopped)", { ":PiIde start" })
  else
    vim.health.warn("host not running (auto_start = false)", { ":PiIde start, or setup({ auto_start = true })" })
  end
end

-- Whether agents get files through this Neovim: never while its cwd is
-- `/`, the home directory or above. The host binary decides, as it does
-- for every call.
local function check_project(host)
  local bin = host.binary()
  local cwd = vim.fn.getcwd(-1, -1)
  local result = vim.system({ bin, "--check-root", cwd }, { text = true }):wait(5000)
  local verdict = vim.trim(result.stdout or "")
  if result.code == 0 then
    vim.health.ok(("project root %s: agents' paths stay inside it"):format(cwd))
  elseif verdict ~= "" then
    vim.health.warn("Neovim's current directory " .. verdict)
  else
    vim.health.warn(("cannot tell whether %s is a project: %s"):format(cwd, vim.trim(result.stderr or "")))
  end
end

-- Claude Code: where it finds us, and whether another plugin announces
-- this Neovim to it too.
local function check_claude(host)
  local dir = host.claude_lock_dir()
  if not dir then
    vim.health.info("Claude Code: not announced (claude_code = false)")
  else
    local lockfile = host.status().claude_lockfile
    vim.health.ok(
      lockfile and ("Claude Code finds Neovim through %s"):format(lockfile)
        or ("Claude Code will find Neovim in %s once the host runs"):format(dir)
    )
  end
  local claudecode = package.loaded["claudecode"] ~= nil or vim.fn.exists(":ClaudeCode") == 2
  if dir and claudecode then
    vim.health.warn(
      "coder/claudecode.nvim is loaded too: two servers announce this Neovim to Claude Code. "
        .. "`claude --ide` then finds two IDEs and asks which one to use, and a claude started "
        .. "in one plugin's terminal connects to that plugin (CLAUDE_CODE_SSE_PORT).",
      { "keep one: setup({ claude_code = false }) here, or disable claudecode.nvim" }
    )
  end
end

-- Codex CLI's /ide socket: where it is served.
local function check_codex(host)
  local status = host.status()
  local codex = status.codex
  if not host.codex_tmpdir() then
    vim.health.info("Codex CLI: its /ide socket is not served (codex = false)")
  elseif codex then
    vim.health.ok(("Codex CLI's /ide finds Neovim at %s (TMPDIR=%s)"):format(codex.socket, codex.tmpdir))
    if codex.shared then
      vim.health.ok("and at the shared " .. codex.shared .. ": a Codex in any shell of yours finds this Neovim")
    else
      vim.health.info("the shared place is not served: " .. (codex.shared_note or "?"))
    end
  elseif status.running then
    vim.health.error("Codex CLI: its /ide socket is not served: " .. (status.codex_error or "unknown reason"))
  end
end

-- Gemini CLI and Qwen Code: where each finds us, and who is connected.
local function check_companions(host)
  local status = host.status()
  local wanted = {
    { kind = "gemini", name = "Gemini CLI", dir = host.gemini_dir() },
    { kind = "qwen", name = "Qwen Code", dir = host.qwen_dir() },
  }
  for _, cli in ipairs(wanted) do
    local file
    for _, announced in ipairs(status.companions or {}) do
      if announced.client == cli.kind then
        file = announced.file
      end
    end
    local connected = 0
    for _, client in ipairs(status.clients) do
      if client.kind == cli.kind then
        connected = connected + 1
      end
    end
    if not cli.dir then
      vim.health.info(("%s: not announced (%s = false)"):format(cli.name, cli.kind))
    elseif file then
      vim.health.ok(
        ("%s finds Neovim through %s; %d connected (`/ide enable` in it connects)"):format(cli.name, file, connected)
      )
    elseif status.running then
      vim.health.error(("%s: not announced: %s"):format(cli.name, status.companion_error or "unknown reason"))
    else
      vim.health.info(("%s will find Neovim in %s once the host runs"):format(cli.name, cli.dir))
    end
  end
end

-- pi's context socket: where it is, and that pi finds it only when started
-- in the project root.
local function check_socket(host)
  local option = require("pi-ide.config").values.context_socket
  if not option.enabled then
    vim.health.info("pi context socket: off (context_socket.enabled = false)")
    return
  end
  local status = host.status()
  local root = host.project_root()
  if status.socket then
    vim.health.ok(("pi context socket %s: start pi in %s to find it"):format(status.socket, root))
  elseif status.socket_error then
    vim.health.error("pi context socket: " .. status.socket_error, {
      ("make %s/.pi/ide writable, or setup({ context_socket = { enabled = false } })"):format(root),
    })
  else
    vim.health.info(("pi context socket: %s/.pi/ide/%s.sock once the host runs"):format(root, option.name))
  end
end

-- Most MCP sessions an endpoint keeps (src/http/sessions.rs).
local MAX_SESSIONS = 64

-- The MCP endpoint: where it listens (or why not), how long its token and
-- idle sessions last, how many are open.
local function check_mcp(host)
  local option = require("pi-ide.config").values.mcp
  if not option.enabled then
    vim.health.info("MCP endpoint: off (mcp.enabled = false)")
    return
  end
  local idle = option.session_idle_minutes > 0
      and ("idle sessions close after %s minutes"):format(tostring(option.session_idle_minutes))
    or "idle sessions stay until the cap needs their place"
  local token = option.port == 0 and "a new port and token each start"
    or ("token kept in %s"):format(host.mcp_token_file())
  local status = host.status()
  if status.mcp_url then
    vim.health.ok(("MCP endpoint %s (%s; %s): :PiIde mcp shows how to connect"):format(status.mcp_url, token, idle))
  elseif status.mcp_error then
    vim.health.error("MCP endpoint: " .. status.mcp_error, {
      "set mcp = { port = N } to a free port, or 0 for any free one",
    })
  else
    local port = option.port == 0 and "<any free port>" or tostring(option.port)
    vim.health.info(("MCP endpoint: http://127.0.0.1:%s/mcp once the host runs (%s; %s)"):format(port, token, idle))
  end
  if status.mcp_token_warning then
    vim.health.warn(status.mcp_token_warning)
  end
  if status.running then
    local open = {}
    for endpoint, count in pairs(status.sessions) do
      open[#open + 1] = ("%s %d"):format(endpoint == "MCP" and "/mcp" or endpoint, count)
    end
    table.sort(open)
    vim.health.info(
      ("MCP sessions open: %s (at most %d an endpoint; past that the one idle longest closes)"):format(
        #open > 0 and table.concat(open, ", ") or "none",
        MAX_SESSIONS
      )
    )
  end
end

-- Whether each agent `:PiIde agent` can start is executable; a missing one
-- is only a warning (the default agent) or a note (the other): the plugin
-- works without either.
local function check_agents()
  vim.health.start("pi-ide agent terminal (:PiIde agent)")
  local agent = require("pi-ide.agent")
  local default = require("pi-ide.config").values.agent.default
  for _, name in ipairs(agent.NAMES) do
    local program = agent.program(name)
    local path = vim.fn.exepath(program)
    if path ~= "" then
      vim.health.ok(("%s: %s"):format(name, path))
    else
      local message = ("%s: `%s` is not executable; install it with %s, or set agent.%s.cmd"):format(
        name,
        program,
        agent.install_hint(name),
        name
      )
      if name == default then
        vim.health.warn(message)
      else
        vim.health.info(message)
      end
    end
  end
  local running = agent.status()
  if running then
    vim.health.info(("running: %s (pid %d)"):format(running.name, running.pid))
  end
  -- The review of changes snapshots the project with git, in or out of a
  -- repository.
  local git = vim.fn.exepath("git")
  local when = require("pi-ide.config").values.agent.baseline and "as an agent starts and on"
    or "on (agent.baseline = false)"
  if git ~= "" then
    vim.health.ok(
      ("review of changes (:PiIde changes): git %s; baselines taken %s :PiIde changes start"):format(git, when)
    )
  else
    vim.health.warn("review of changes (:PiIde changes): `git` is not executable, so no baseline can be taken", {
      "install git (it is used outside repositories too)",
    })
  end
end

-- Each ACP agent of `:PiIde chat`: installed, and answering `--version`
-- (its program run with no input, at most 5 s).
local function check_chat_agents()
  vim.health.start("pi-ide chat (:PiIde chat, ACP agents)")
  local agents = require("pi-ide.chat.agents")
  local default = require("pi-ide.config").values.acp.default
  for _, name in ipairs(agents.names()) do
    local agent = agents.get(name)
    local installed, hint = agents.installed(agent)
    if not installed then
      if name == default then
        vim.health.warn(hint)
      else
        vim.health.info(hint)
      end
    else
      local ok, result = pcall(function()
        return vim.system({ agent.cmd[1], "--version" }, { text = true }):wait(5000)
      end)
      local version = ok and result.code == 0 and vim.trim((result.stdout or ""):match("[^\n]*") or "")
      if version then
        vim.health.ok(("%s: %s (%s)"):format(name, table.concat(agent.cmd, " "), version))
      else
        local why = ok and (result.signal ~= 0 and "did not answer within 5 s" or ("exited " .. result.code))
          or tostring(result)
        vim.health.warn(("%s: %s is installed but `%s --version` %s"):format(name, agent.cmd[1], agent.cmd[1], why))
      end
    end
  end
end

function M.check()
  vim.health.start("pi-ide")
  if vim.fn.has("nvim-0.11") == 1 then
    vim.health.ok("Neovim " .. tostring(vim.version()))
  else
    vim.health.error(
      ("Neovim 0.11 or newer is required (this is %s): setup() starts nothing"):format(tostring(vim.version()))
    )
  end
  local host = require("pi-ide.host")
  local binary_ok = check_binary(host)
  local lock_dir_ok = check_lock_dir(host)
  check_host(host, binary_ok and lock_dir_ok)
  if binary_ok then
    check_project(host)
  end
  check_claude(host)
  check_companions(host)
  check_codex(host)
  check_socket(host)
  check_mcp(host)
  vim.health.info("log: " .. host.log_path())
  check_agents()
  check_chat_agents()
end

return M
