-- What each agent is: its command, its kind (how it is wired to this
-- Neovim: "claude", "pi", "gemini", "qwen", or "other") and the arguments
-- and environment it gets. Built in: claude, pi, gemini and qwen; option
-- `agent.agents` adds more.
local config = require("pi-ide.config")
local util = require("pi-ide.util")

local M = {}

M.BUILTIN = { "claude", "pi", "gemini", "qwen" }

-- The commands that install each agent, the one to use today first.
local INSTALL = {
  claude = { "npm install -g @anthropic-ai/claude-code" },
  -- pi 1.x; 0.x was published under the older name.
  pi = { "npm install -g @earendil-works/pi-coding-agent", "npm install -g @mariozechner/pi-coding-agent" },
  gemini = { "npm install -g @google/gemini-cli" },
  qwen = { "npm install -g @qwen-code/qwen-code" },
}

local KINDS = { claude = true, pi = true, gemini = true, qwen = true }

-- Loopback names every agent must dial directly, whatever http_proxy says.
local LOOPBACK = { "localhost", "127.0.0.1", "::1" }

---@class pi_ide.AgentSpec
---@field name string
---@field cmd string[]|string a list run as is, or a string run by 'shell'
---@field kind "claude"|"pi"|"gemini"|"qwen"|"other"
---@field env table<string, string>?

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
    return { name = name, cmd = opts[name].cmd, kind = name }
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
  return spec.kind == "pi" and opts.nvim and config.values.mcp.enabled
end

--- The command that starts `spec` with `args` (words) after its own:
--- a list stays a list, a string gets the words shell-quoted.
function M.command(spec, args, status)
  local extra = {}
  if spec.kind == "pi" then
    for _, file in ipairs(pi_extensions(status)) do
      vim.list_extend(extra, { "-e", file })
    end
  end
  vim.list_extend(extra, args or {})
  if type(spec.cmd) == "table" then
    return vim.list_extend(vim.deepcopy(spec.cmd), extra)
  end
  local words = vim.tbl_map(vim.fn.shellescape, extra)
  return vim.trim(spec.cmd .. " " .. table.concat(words, " "))
end

--- What the agent's environment gets on top of Neovim's; `status` is the
--- host's (port, mcp_url).
function M.environment(spec, status)
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
