-- The MCP LSP tools' requests (seam call `lsp_request`), made with
-- callbacks so Neovim never waits: the answer goes back to the host as the
-- `lsp_answer` event. Positions to and from the host are 0-based with
-- UTF-16 columns, converted from and to each server's encoding. Kinds:
-- hover, definition, references, symbols (of a file), workspace_symbols
-- (query.text) and problems (a file's diagnostics, see file_problems.lua).
local lsp_buffer = require("pi-ide.lsp_buffer")
local answer, convert = lsp_buffer.answer, lsp_buffer.convert

local M = {}

local methods = {
  hover = "textDocument/hover",
  definition = "textDocument/definition",
  references = "textDocument/references",
  symbols = "textDocument/documentSymbol",
}

--- Line `row` (0-based) of `path`: from its loaded buffer, else the disk.
local function line_of(path, row, cache)
  local buf = vim.fn.bufnr(path)
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
    return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  end
  if cache[path] == nil then
    local ok, lines = pcall(vim.fn.readfile, path)
    cache[path] = ok and lines or {}
  end
  return cache[path][row + 1] or ""
end

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

local function locations(results)
  local out, seen, cache = {}, {}, {}
  for _, entry in ipairs(results) do
    local list = entry.result
    if list.uri or list.targetUri then
      list = { list }
    end
    for _, loc in ipairs(list) do
      local uri = loc.targetUri or loc.uri
      local range = loc.targetSelectionRange or loc.range
      if uri and range then
        local path = vim.uri_to_fname(uri)
        local text = line_of(path, range.start.line, cache)
        local character = convert(text, range.start.character, entry.encoding, "utf-16")
        local key = path .. ":" .. range.start.line .. ":" .. character
        if not seen[key] then
          seen[key] = true
          table.insert(out, { path = path, line = range.start.line, character = character, text = text })
        end
      end
    end
  end
  table.sort(out, function(a, b)
    if a.path ~= b.path then
      return a.path < b.path
    end
    if a.line ~= b.line then
      return a.line < b.line
    end
    return a.character < b.character
  end)
  return { locations = out }
end

local function symbols(results, buf)
  local out = {}
  local function add(symbol, encoding)
    local range = symbol.selectionRange or symbol.range or (symbol.location and symbol.location.range)
    if range then
      local text = vim.api.nvim_buf_get_lines(buf, range.start.line, range.start.line + 1, false)[1] or ""
      table.insert(out, {
        name = symbol.name,
        kind = vim.lsp.protocol.SymbolKind[symbol.kind] or tostring(symbol.kind),
        line = range.start.line,
        character = convert(text, range.start.character, encoding, "utf-16"),
      })
    end
    for _, child in ipairs(symbol.children or {}) do
      add(child, encoding)
    end
  end
  for _, entry in ipairs(results) do
    for _, symbol in ipairs(entry.result) do
      add(symbol, entry.encoding)
    end
  end
  return { symbols = out }
end

-- At most this many workspace symbols go to the host, which cuts them to
-- the call's limit.
local MAX_WORKSPACE_SYMBOLS = 2000

--- workspace/symbol results (SymbolInformation or WorkspaceSymbol, whose
--- location may lack a range) as { name, kind, path, line, character }.
local function found_symbols(results)
  local out, cache = {}, {}
  for _, entry in ipairs(results) do
    for _, symbol in ipairs(entry.result) do
      local location = symbol.location or {}
      if location.uri and #out < MAX_WORKSPACE_SYMBOLS then
        local path = vim.uri_to_fname(location.uri)
        local start = location.range and location.range.start or { line = 0, character = 0 }
        local text = line_of(path, start.line, cache)
        table.insert(out, {
          name = symbol.name,
          kind = vim.lsp.protocol.SymbolKind[symbol.kind] or tostring(symbol.kind),
          path = path,
          line = start.line,
          character = convert(text, start.character, entry.encoding, "utf-16"),
        })
      end
    end
  end
  return { symbols = out }
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
        table.insert(results, { result = result, encoding = encoding })
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
    local ok, result = pcall(found_symbols, results)
    answer(query.id, ok and { result = result } or { error = tostring(result) })
  end)
end

--- Starts `query` = { id, kind, path, line, character, timeout_ms } and
--- returns at once; the answer follows as `lsp_answer`.
function M.request(query)
  if query.kind == "workspace_symbols" then
    return workspace_symbols(query)
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
    return require("pi-ide.file_problems").wait(buf, was_loaded, query, function(payload)
      answer(query.id, payload)
    end)
  end
  lsp_buffer.with_clients(query, buf, was_loaded, method, function(clients, deadline)
    send(method, clients, buffer_params(buf, query), query, deadline, function(results, err)
      if err then
        return answer(query.id, { error = err })
      end
      local ok, result = pcall(function()
        if query.kind == "hover" then
          return hover_markdown(vim.tbl_map(function(r)
            return r.result
          end, results))
        elseif query.kind == "symbols" then
          return symbols(results, buf)
        end
        return locations(results)
      end)
      answer(query.id, ok and { result = result } or { error = tostring(result) })
    end, buf)
  end)
end

return M
