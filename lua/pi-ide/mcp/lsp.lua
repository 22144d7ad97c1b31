-- The MCP LSP tools' requests (seam call `lsp_request`), made with
-- callbacks so Neovim never waits: the answer goes back to the host as the
-- `lsp_answer` event. Positions from the host are 0-based with UTF-16
-- columns, converted to each server's encoding; answers are the servers'
-- own results with their encodings, which the host converts and completes
-- with line text off the UI thread (so nothing here grows with the answer
-- beyond passing it on). Kinds: hover, definition, references,
-- implementation, type_definition, declaration, symbols (of
-- a file), workspace_symbols (query.text), problems (a file's
-- diagnostics, see mcp/problems.lua) and workspace_diagnostics (pulled
-- from the servers that offer them, ditto).
local lsp_buffer = require("pi-ide.mcp.buffer")
local answer, convert = lsp_buffer.answer, lsp_buffer.convert

local M = {}

local methods = {
  hover = "textDocument/hover",
  definition = "textDocument/definition",
  references = "textDocument/references",
  implementation = "textDocument/implementation",
  type_definition = "textDocument/typeDefinition",
  declaration = "textDocument/declaration",
  symbols = "textDocument/documentSymbol",
  call_hierarchy = "textDocument/prepareCallHierarchy",
  type_hierarchy = "textDocument/prepareTypeHierarchy",
}

-- Requests about an item a hierarchy answer named, asked of the client
-- that named it.
local item_methods = {
  incoming_calls = "callHierarchy/incomingCalls",
  outgoing_calls = "callHierarchy/outgoingCalls",
  supertypes = "typeHierarchy/supertypes",
  subtypes = "typeHierarchy/subtypes",
}

local function hover_markdown(results)
  local parts = {}
  for _, result in ipairs(results) do
    if result.contents then
      local lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
      local text = vim.trim(table.concat(lines, "\n"))
      if text ~= "" then
        table.insert(parts, text)
      end
    end
  end
  return { markdown = table.concat(parts, "\n\n") }
end

-- At most this many workspace symbols go to the host, which cuts them to
-- the call's limit.
local MAX_WORKSPACE_SYMBOLS = 2000

--- workspace/symbol responses cut to MAX_WORKSPACE_SYMBOLS symbols in all.
local function capped(responses)
  local left = MAX_WORKSPACE_SYMBOLS
  for _, response in ipairs(responses) do
    if #response.result > left then
      response.result = vim.list_slice(response.result, 1, left)
    end
    left = left - #response.result
  end
  return responses
end

--- Sends `method` to each of `clients` with `params(encoding)`; `done(results,
--- err)` once all answered or the deadline passed. `buf` (or nil) is the
--- buffer the request is about.
local function send(method, clients, params, query, deadline, done, buf)
  local finished, pending, results, errors = false, #clients, {}, {}
  local function finish()
    if finished then
      return
    end
    finished = true
    if #results == 0 and #errors > 0 then
      done(nil, table.concat(errors, "; "))
    else
      done(results)
    end
  end
  for _, client in ipairs(clients) do
    local encoding = client.offset_encoding or "utf-16"
    client:request(method, params(encoding), function(err, result)
      if err then
        table.insert(errors, client.name .. ": " .. tostring(err.message or err))
      elseif result ~= nil and result ~= vim.NIL then
        table.insert(results, { result = result, encoding = encoding, client_id = client.id })
      end
      pending = pending - 1
      if pending == 0 then
        finish()
      end
    end, buf)
  end
  local left = math.max(deadline - vim.uv.now(), 1)
  vim.defer_fn(function()
    if not finished and #results == 0 then
      finished = true
      done(nil, ("%s: no answer from the language server within %d ms"):format(method, query.timeout_ms))
    else
      finish()
    end
  end, left)
end

--- The parameters of a request about `buf` at the query's position.
local function buffer_params(buf, query)
  return function(encoding)
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) } }
    if query.kind ~= "symbols" then
      local text = vim.api.nvim_buf_get_lines(buf, query.line, query.line + 1, false)[1] or ""
      params.position = { line = query.line, character = convert(text, query.character, "utf-16", encoding) }
    end
    if query.kind == "references" then
      params.context = { includeDeclaration = true }
    end
    return params
  end
end

--- workspace/symbol `query.text` across every client that can answer it.
local function workspace_symbols(query)
  local method = "workspace/symbol"
  local clients = vim.lsp.get_clients({ method = method })
  if #clients == 0 then
    return answer(query.id, { no_server = true })
  end
  local deadline = vim.uv.now() + (query.timeout_ms or 5000)
  local params = function()
    return { query = query.text or "" }
  end
  send(method, clients, params, query, deadline, function(results, err)
    if err then
      return answer(query.id, { error = err })
    end
    answer(query.id, { result = { responses = capped(results) } })
  end)
end

--- `query.item` asked of the client that returned it (`query.client_id`).
local function about_item(query, method)
  local client = vim.lsp.get_client_by_id(query.client_id)
  if not client or client:is_stopped() then
    return answer(query.id, { error = "the language server that answered before has stopped" })
  end
  if not client:supports_method(method) then
    return answer(query.id, { error = ("%s does not support %s"):format(client.name, method) })
  end
  local deadline = vim.uv.now() + (query.timeout_ms or 5000)
  local params = function()
    return { item = query.item }
  end
  send(method, { client }, params, query, deadline, function(results, err)
    if err then
      return answer(query.id, { error = err })
    end
    answer(query.id, { result = { responses = results } })
  end)
end

--- Starts `query` = { id, kind, path, line, character, item?, client_id?,
--- timeout_ms } and returns at once; the answer follows as `lsp_answer`.
function M.request(query)
  if query.kind == "workspace_symbols" then
    return workspace_symbols(query)
  end
  if query.kind == "workspace_diagnostics" then
    return require("pi-ide.mcp.problems").workspace(query, function(payload)
      answer(query.id, payload)
    end)
  end
  if item_methods[query.kind] then
    return about_item(query, item_methods[query.kind])
  end
  local method = methods[query.kind]
  if not method and query.kind ~= "problems" then
    error("pi-ide: unknown LSP request " .. tostring(query.kind), 0)
  end
  local buf, was_loaded = lsp_buffer.load(query)
  if not buf then
    return
  end
  if query.kind == "problems" then
    return require("pi-ide.mcp.problems").wait(buf, was_loaded, query, function(payload)
      answer(query.id, payload)
    end)
  end
  lsp_buffer.with_clients(query, buf, was_loaded, method, function(clients, deadline)
    send(method, clients, buffer_params(buf, query), query, deadline, function(results, err)
      if err then
        return answer(query.id, { error = err })
      end
      if query.kind ~= "hover" then
        return answer(query.id, { result = { responses = results } })
      end
      local ok, result = pcall(
        hover_markdown,
        vim.tbl_map(function(r)
          return r.result
        end, results)
      )
      answer(query.id, ok and { result = result } or { error = tostring(result) })
    end, buf)
  end)
end

return M
