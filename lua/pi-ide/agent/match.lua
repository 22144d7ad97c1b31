-- Which agent terminal a connected client (or the process behind an MCP
-- call) is. Claude tells its pid (`ide_connected`); for pi and MCP calls
-- the host finds the process that owns the connection's socket. A client
-- is an agent's when that pid is the agent's process or one of its
-- descendants (a shell command, `env`, a wrapper script in between).
local M = {}

-- Enough for any wrapper chain; stops a loop in a broken process table.
local MAX_DEPTH = 32

local function parent(pid)
  local ok, info = pcall(vim.api.nvim_get_proc, pid)
  return ok and type(info) == "table" and info.ppid or nil
end

--- Whether process `pid` is `ancestor` or runs below it.
function M.descends(pid, ancestor)
  for _ = 1, MAX_DEPTH do
    if pid == nil or pid <= 1 then
      return false
    end
    if pid == ancestor then
      return true
    end
    pid = parent(pid)
  end
  return false
end

--- The agent of `agents` whose process `pid` is (or runs below), or nil.
function M.agent_of_pid(pid, agents)
  for _, agent in ipairs(agents) do
    if agent.pid and M.descends(pid, agent.pid) then
      return agent
    end
  end
  return nil
end

--- The agent of `agents` whose process client `client_id` is, or nil.
function M.agent_of_client(client_id, agents)
  for _, client in ipairs(require("pi-ide.host").status().clients) do
    if client.id == client_id and client.pid then
      return M.agent_of_pid(client.pid, agents)
    end
  end
  return nil
end

return M
