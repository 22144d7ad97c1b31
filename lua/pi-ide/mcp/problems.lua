-- MCP get_file_problems: a file's diagnostics once its language servers
-- have published their first ones. A freshly loaded file gives its servers
-- time to attach; then a timer looks, without blocking Neovim, until every
-- attached client has published for the buffer or the query's time is up.
-- And for get_project_problems, the workspace diagnostics of the servers
-- that offer them, asked with callbacks and cut to bounds.
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

-- At most this many file reports, and diagnostics in all, go to the host.
M.max_reports = 1000
M.max_diagnostics = 10000

--- `report.items` cut to what `left` allows; the new `left`.
local function cut(report, left)
  local items = type(report.items) == "table" and report.items or {}
  if #items > left then
    report.items = vim.list_slice(items, 1, left)
  end
  return left - #(report.items or {})
end

--- workspace/diagnostic asked of every client that offers it; calls
--- `done(payload)` once all answered or `query.timeout_ms` passed:
--- `{ result = { responses = {{client, encoding, reports}}, silent, errors } }`,
--- or `{ no_server = true }`. Requests still running then are cancelled.
function M.workspace(query, done)
  -- Servers that offer diagnostics for the whole workspace.
  local clients = vim.lsp.get_clients({ method = "workspace/diagnostic" })
  if #clients == 0 then
    return done({ no_server = true })
  end
  -- client -> request id, while unanswered; answered, even at once.
  local responses, errors, running, answered = {}, {}, {}, {}
  local reports_left, diagnostics_left = M.max_reports, M.max_diagnostics
  local sending, finished = true, false
  local function finish()
    if finished then
      return
    end
    finished = true
    local unanswered = {}
    for client, id in pairs(running) do
      table.insert(unanswered, client.name)
      client:cancel_request(id)
    end
    table.sort(unanswered)
    done({ result = { responses = responses, silent = unanswered, errors = errors } })
  end
  local function take(client, err, result)
    answered[client], running[client] = true, nil
    if err then
      table.insert(errors, client.name .. ": " .. tostring(err.message or err))
    elseif type(result) == "table" and type(result.items) == "table" then
      local reports = vim.list_slice(result.items, 1, reports_left)
      reports_left = reports_left - #reports
      for _, report in ipairs(reports) do
        diagnostics_left = cut(report, diagnostics_left)
      end
      table.insert(responses, { client = client.name, encoding = client.offset_encoding, reports = reports })
    end
    if not sending and next(running) == nil then
      finish()
    end
  end
  for _, client in ipairs(clients) do
    local provider = client.server_capabilities.diagnosticProvider
    local identifier = type(provider) == "table" and provider.identifier or nil
    local params = { identifier = identifier, previousResultIds = {} }
    local ok, id = client:request("workspace/diagnostic", params, function(err, result)
      if not finished then
        take(client, err, result)
      end
    end)
    if not ok then
      table.insert(errors, client.name .. ": the request could not be sent")
    elseif not answered[client] then
      running[client] = id
    end
  end
  sending = false
  if next(running) == nil then
    return finish()
  end
  vim.defer_fn(finish, query.timeout_ms or 2000)
end

return M
