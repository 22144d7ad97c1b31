-- The agents `:PiIde chat` speaks to over the Agent Client Protocol: each
-- an argv (never a shell line) and an environment, built in or from option
-- `acp.agents`, with the command that installs it when it is missing.
local config = require("pi-ide.config")

local M = {}

---@class pi_ide.ChatAgent
---@field name string
---@field cmd string[] the agent's argv
---@field env table<string, string>
---@field install? string what installs it

-- Built in: the agent, or the ACP adapter that wraps it.
local BUILTIN = {
  gemini = { cmd = { "gemini", "--acp" }, install = "npm install -g @google/gemini-cli" },
  qwen = { cmd = { "qwen", "--acp" }, install = "npm install -g @qwen-code/qwen-code" },
  opencode = { cmd = { "opencode", "acp" }, install = "npm install -g opencode-ai" },
  claude = { cmd = { "claude-agent-acp" }, install = "npm install -g @zed-industries/claude-agent-acp" },
  codex = { cmd = { "codex-acp" }, install = "npm install -g @zed-industries/codex-acp" },
  pi = { cmd = { "pi-acp" }, install = "npm install -g pi-acp" },
}

--- Every agent's name, built in first, sorted.
---@return string[]
function M.names()
  local names = vim.tbl_keys(BUILTIN)
  table.sort(names)
  local own = {}
  for name in pairs(config.values.acp.agents) do
    if not BUILTIN[name] then
      own[#own + 1] = name
    end
  end
  table.sort(own)
  vim.list_extend(names, own)
  return names
end

--- Agent `name`, or nil.
---@param name string
---@return pi_ide.ChatAgent?
function M.get(name)
  local own = config.values.acp.agents[name]
  local builtin = BUILTIN[name]
  if not own and not builtin then
    return nil
  end
  return {
    name = name,
    cmd = vim.deepcopy((own or builtin).cmd),
    env = vim.deepcopy(own and own.env or {}),
    install = builtin and builtin.install,
  }
end

--- Whether the agent's program runs here, and if not, what to do.
---@param agent pi_ide.ChatAgent
---@return boolean installed, string? hint
function M.installed(agent)
  if vim.fn.executable(agent.cmd[1]) == 1 then
    return true
  end
  local hint = agent.install and ("install it: " .. agent.install)
    or ("set acp.agents.%s.cmd to its command"):format(agent.name)
  return false, ("%s is not installed (%s not on PATH); %s"):format(agent.name, agent.cmd[1], hint)
end

return M
