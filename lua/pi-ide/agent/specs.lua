-- What each agent is: its command, its kind (how it is wired to this
-- Neovim: "claude", "pi", "gemini", "qwen", "codex", "opencode", or
-- "other") and the arguments and environment it gets. Built in: claude,
-- pi, gemini, qwen, codex and opencode; option `agent.agents` adds more.
local config = require("pi-ide.config")
local util = require("pi-ide.util")

local M = {}

M.BUILTIN = { "claude", "pi", "gemini", "qwen", "codex", "opencode" }

-- The commands that install each agent, the one to use today first.
local INSTALL = {
  claude = { "npm install -g @anthropic-ai/claude-code" },
  -- pi 1.x; 0.x was published under the older name.
  pi = { "npm install -g @earendil-works/pi-coding-agent", "npm install -g @mariozechner/pi-coding-agent" },
  gemini = { "npm install -g @google/gemini-cli" },
  qwen = { "npm install -g @qwen-code/qwen-code" },
  codex = { "npm install -g @openai/codex" },
  opencode = { "npm install -g opencode-ai" },
}

local KINDS = { claude = true, pi = true, gemini = true, qwen = true, codex = true, opencode = true }

-- Codex gives a hook this long (seconds) before it kills it and applies
-- the patch; `pi-ide codex-hook` denies it a little before.
local HOOK_TIMEOUT_S = 86400

-- Loopback names every agent must dial directly, whatever http_proxy says.
local LOOPBACK = { "localhost", "127.0.0.1", "::1" }

---@class pi_ide.AgentSpec
---@field name string
---@field cmd string[]|string a list run as is, or a string run by 'shell'
---@field kind "claude"|"pi"|"gemini"|"qwen"|"codex"|"opencode"|"other"
---@field env table<string, string>?
---@field review boolean? codex: pass the apply_patch hook; opencode: edits ask

local function program_of(cmd)
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

--- Agent `name`'s definition, or nil when there is no such agent.
---@return pi_ide.AgentSpec?
function M.get(name)
  local opts = config.values.agent
  local own = opts.agents[name]
  if own then
    local kind = own.kind or vim.fs.basename(program_of(own.cmd))
    return {
      name = name,
      cmd = own.cmd,
      kind = KINDS[kind] and kind or "other",
      env = own.env,
    }
  end
  if KINDS[name] then
    local builtin = opts[name]
    local review = nil
    if name == "codex" then
      review = builtin.review_patches
    elseif name == "opencode" then
      review = builtin.review_edits
    end
    return { name = name, cmd = builtin.cmd, kind = name, review = review }
  end
  return nil
end

--- Every agent's name: the built-in ones, then `agent.agents`, sorted.
function M.names()
  local names = vim.deepcopy(M.BUILTIN)
  local own = vim.tbl_keys(config.values.agent.agents)
  table.sort(own)
  for _, name in ipairs(own) do
    if not vim.tbl_contains(names, name) then
      names[#names + 1] = name
    end
  end
  return names
end

--- The program an agent's command runs (what must be executable).
function M.program(name)
  local spec = M.get(name)
  return spec and program_of(spec.cmd) or name
end

--- How to install agent `name`, quoted: "`command`", then any other
--- "(or `command`)"; nil for an agent of the config's own.
---@return string?
function M.install_hint(name)
  local spec = M.get(name)
  local commands = spec and INSTALL[spec.name]
  if not commands then
    return nil
  end
  local hint = ("`%s`"):format(commands[1])
  for i = 2, #commands do
    hint = hint .. (" (or `%s`)"):format(commands[i])
  end
  return hint
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

-- pi's own extensions from this plugin (option agent.pi.extensions).
local function pi_extensions(status)
  local wanted = config.values.agent.pi.extensions
  local files = {}
  if wanted.review then
    files[#files + 1] = util.root() .. "/pi/review.ts"
  end
  if wanted.nvim and status.mcp_url then
    files[#files + 1] = util.root() .. "/pi/nvim.ts"
  end
  return files
end

--- Whether agent `spec` needs the host running before it starts: Claude,
--- Gemini CLI and Qwen Code read its ports, pi with the nvim extension its
--- MCP endpoint.
function M.needs_host(spec)
  local opts = config.values.agent.pi.extensions
  if spec.kind == "claude" or spec.kind == "gemini" or spec.kind == "qwen" then
    return true
  end
  if spec.kind == "codex" or spec.kind == "opencode" then
    return true
  end
  return spec.kind == "pi" and opts.nvim and config.values.mcp.enabled
end

-- `text` as a TOML basic string.
local function toml_string(text)
  return '"' .. text:gsub("\\", "\\\\"):gsub('"', '\\"') .. '"'
end

--- Codex's `-c` override that installs the PreToolUse hook on apply_patch
--- (`pi-ide codex-hook`), or nil when the host binary is not found. Its
--- text stays the same from one start to the next, so the person trusts
--- it once in Codex's /hooks.
function M.codex_hook()
  local bin = require("pi-ide.host").binary()
  if not bin then
    return nil
  end
  local command = vim.fn.shellescape(bin) .. " codex-hook"
  return ("hooks.PreToolUse=[{matcher=%s, hooks=[{type=%s, command=%s, timeout=%d, statusMessage=%s}]}]"):format(
    toml_string("^apply_patch$"),
    toml_string("command"),
    toml_string(command),
    HOOK_TIMEOUT_S,
    toml_string("Waiting for your review in Neovim")
  )
end

--- The command that starts `spec` with `args` (words) after its own:
--- a list stays a list, a string gets the words shell-quoted. `launch`:
--- what the launch chose (opencode's port).
function M.command(spec, args, status, launch)
  local extra = {}
  if spec.kind == "pi" then
    for _, file in ipairs(pi_extensions(status)) do
      vim.list_extend(extra, { "-e", file })
    end
  elseif spec.kind == "codex" and spec.review then
    local hook = M.codex_hook()
    if hook then
      vim.list_extend(extra, { "-c", hook })
    end
  elseif spec.kind == "opencode" and launch and launch.port then
    vim.list_extend(extra, { "--port", tostring(launch.port) })
  end
  vim.list_extend(extra, args or {})
  if type(spec.cmd) == "table" then
    return vim.list_extend(vim.deepcopy(spec.cmd), extra)
  end
  local words = vim.tbl_map(vim.fn.shellescape, extra)
  return vim.trim(spec.cmd .. " " .. table.concat(words, " "))
end

--- The MCP endpoint's bearer token, for Codex's `--bearer-token-env-var`
--- (what `:PiIde mcp` prints): read from the kept token file, else the
--- lockfile, into the agent's environment and nowhere else.
local function mcp_token(status)
  if not status.mcp_url then
    return nil
  end
  local ok, lines = pcall(vim.fn.readfile, status.mcp_token_file or status.lockfile)
  if not ok or #lines == 0 then
    return nil
  end
  if status.mcp_token_file then
    return vim.trim(lines[1])
  end
  local decoded, lock = pcall(vim.json.decode, table.concat(lines, "\n"))
  return decoded and type(lock) == "table" and type(lock.authToken) == "string" and lock.authToken or nil
end

--- opencode's config with edits set to ask, over any the environment has.
local function opencode_config()
  local given = vim.env.OPENCODE_CONFIG_CONTENT
  local ok, content = pcall(vim.json.decode, given or "{}")
  if not ok or type(content) ~= "table" then
    content = {}
  end
  if type(content.permission) ~= "table" then
    content.permission = {}
  end
  content.permission.edit = "ask"
  return vim.json.encode(content)
end

--- What the agent's environment gets on top of Neovim's; `status` is the
--- host's (port, mcp_url), `launch` what the launch chose (opencode's
--- password).
function M.environment(spec, status, launch)
  local no_proxy = M.no_proxy()
  local env = { no_proxy = no_proxy, NO_PROXY = no_proxy }
  if spec.kind == "claude" then
    env.CLAUDE_CODE_SSE_PORT = tostring(status.port)
    env.ENABLE_IDE_INTEGRATION = "true"
    env.FORCE_CODE_TERMINAL = "true"
  elseif spec.kind == "gemini" or spec.kind == "qwen" then
    -- Neovim's own environment has them too, but a tmux pane does not
    -- inherit it.
    env = vim.tbl_extend("force", env, require("pi-ide.cli_env").for_client(spec.kind, status))
  elseif spec.kind == "pi" and config.values.agent.pi.extensions.nvim and status.mcp_url then
    -- pi/nvim.ts runs `/nvim connect <this URL>` when pi starts.
    env.PI_IDE_NVIM_URL = status.mcp_url
  elseif spec.kind == "codex" then
    if status.codex then
      -- Codex's /ide (and the hook) look for $TMPDIR/codex-ipc/ipc-<uid>.sock.
      env.TMPDIR = status.codex.tmpdir
    end
    -- Where `codex mcp add nvim … --bearer-token-env-var` reads it.
    env.PI_IDE_MCP_TOKEN = mcp_token(status)
  elseif spec.kind == "opencode" then
    -- With either set, opencode dials that port without the token (which
    -- only a lockfile gives it) and is refused: empty, it reads Claude
    -- Code's lockfiles, ours among them.
    env.CLAUDE_CODE_SSE_PORT = ""
    env.OPENCODE_EDITOR_SSE_PORT = ""
    if launch and launch.password then
      -- Its server answers only to this; Neovim's host follows it with it.
      env.OPENCODE_SERVER_PASSWORD = launch.password
      env.OPENCODE_CONFIG_CONTENT = opencode_config()
    end
  end
  -- pi reads only $PI_IDE_LOCK_DIR; Neovim's own is inherited.
  local dir, source = require("pi-ide.host").lock_dir()
  if dir and source == "option `lock_dir`" then
    env.PI_IDE_LOCK_DIR = dir
  end
  for key, value in pairs(spec.env or {}) do
    env[key] = value
  end
  return env
end

return M
