-- MCP get_file_problems: a file's diagnostics once its language servers
-- have published their first ones. A freshly loaded file gives its servers
-- time to attach; then a timer looks, without blocking Neovim, until every
-- attached client has published for the buffer or the query's time is up.
local diagnostics = require("pi-ide.diagnostics")

local M = {}

local POLL_MS = 25
-- How long a freshly loaded file waits for a server to attach.
M.attach_ms = 2000

--- The clients of `clients` that have not published for `buf` yet. A
--- client has when its namespace has had diagnostics there; a cleared list
--- names no namespace, so each one counts for one of the remaining clients.
local function silent(buf, clients)
  local arrived = diagnostics.arrived(buf)
  local left = {}
  for _, client in ipairs(clients) do
    local push = vim.lsp.diagnostic.get_namespace(client.id, false)
    local pull = vim.lsp.diagnostic.get_namespace(client.id, true)
    if not (arrived.namespaces[push] or arrived.namespaces[pull]) then
      table.insert(left, client.name)
    end
  end
  if #left <= arrived.empty then
    return {}
  end
  return left
end

--- Calls `done(payload)` with `{ result = { diagnostics, servers, pending },
--- no_server? }` for loaded buffer `buf`; `was_loaded`: it was loaded before
--- this query, so its servers had their chance to attach.
function M.wait(buf, was_loaded, query, done)
  local started = vim.uv.now()
  local deadline = started + (query.timeout_ms or 5000)
  local attach_until = was_loaded and started or started + math.min(M.attach_ms, query.timeout_ms or 5000)
  local timer = nil
  local function stop()
    if timer then
      timer:stop()
      timer:close()
    end
  end
  local function finish(clients, pending)
    stop()
    local servers = vim.tbl_map(function(client)
      return client.name
    end, clients)
    done({
      result = { diagnostics = diagnostics.of(buf), servers = servers, pending = pending },
      no_server = #clients == 0 or nil,
    })
  end
  -- True once answered.
  local function look()
    if not vim.api.nvim_buf_is_valid(buf) then
      stop()
      done({ error = "the buffer of " .. query.path .. " is gone" })
      return true
    end
    local now = vim.uv.now()
    local clients = vim.lsp.get_clients({ bufnr = buf })
    if #clients == 0 then
      if now < attach_until then
        return false
      end
      finish(clients, {})
      return true
    end
    local pending = silent(buf, clients)
    if #pending == 0 or now >= deadline then
      finish(clients, pending)
      return true
    end
    return false
  end
  -- A warm file is answered at once, without waiting for the loop.
  if look() then
    return
  end
  timer = vim.uv.new_timer()
  timer:start(
    POLL_MS,
    POLL_MS,
    vim.schedule_wrap(function()
      if not timer:is_closing() then
        look()
      end
    end)
  )
end

return M
