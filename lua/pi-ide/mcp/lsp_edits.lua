-- The MCP edit tools' LSP requests (seam call `lsp_edit`): formatting,
-- rename, code actions. Made with callbacks so Neovim never waits; the
-- answer goes back as the `lsp_answer` event with the server's own edit
-- (a WorkspaceEdit) and its offset encoding: the host applies it to the
-- text it reads, so nothing here grows with the edit. Positions from the
-- host are 0-based with UTF-16 characters.
local lsp_buffer = require("pi-ide.mcp.buffer")
local answer, convert = lsp_buffer.answer, lsp_buffer.convert

local M = {}

-- How long a freshly loaded file waits for its first diagnostics (the sign
-- its server analysed it) before a rename or code actions are asked for.
M.diagnostics_ms = 3000
-- Code actions listed last, by id, until KEEP newer ones are listed.
local KEEP = 500
local listed, order, next_id = {}, {}, 0

local methods = {
  format = "textDocument/formatting",
  rename = "textDocument/rename",
  code_actions = "textDocument/codeAction",
}

local function line_of(buf, row)
  return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
end

local function message(client, err)
  return ("%s: %s"):format(client.name, type(err) == "table" and tostring(err.message) or tostring(err))
end

--- Sends one request; `done(err, result)` exactly once, by the deadline.
local function request(client, method, params, buf, deadline, done)
  local finished = false
  local function finish(err, result)
    if not finished then
      finished = true
      done(err, result)
    end
  end
  local ok = client:request(method, params, finish, buf)
  if not ok then
    finish({ message = "the server is not running" })
    return
  end
  vim.defer_fn(function()
    finish({ message = method .. ": no answer in time" })
  end, math.max(deadline - vim.uv.now(), 1))
end

--- Answers with `edit` (a WorkspaceEdit) as the server sent it.
local function answer_edit(query, edit, encoding, note)
  answer(query.id, { result = { edit = edit, encoding = encoding or "utf-16", note = note } })
end

local function format(query, buf, client, deadline)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    options = { tabSize = vim.lsp.util.get_effective_tabstop(buf), insertSpaces = vim.bo[buf].expandtab },
  }
  request(client, methods.format, params, buf, deadline, function(err, edits)
    if err then
      return answer(query.id, { error = message(client, err) })
    end
    local changes = {}
    if type(edits) == "table" and #edits > 0 then
      changes[vim.uri_from_bufnr(buf)] = edits
    end
    answer_edit(query, { changes = changes }, client.offset_encoding)
  end)
end

--- The first symbol named `name`, depth first: its 0-based line and UTF-16
--- character, or nil.
local function find_symbol(buf, symbols, name, encoding)
  for _, symbol in ipairs(symbols or {}) do
    local range = symbol.selectionRange or (symbol.location and symbol.location.range) or symbol.range
    if symbol.name == name and range then
      local line = line_of(buf, range.start.line)
      local character = convert(line, range.start.character, encoding, "utf-16")
      if not symbol.selectionRange then
        -- A SymbolInformation's range is the whole declaration: find the name in it.
        local at = line:find(name, vim.str_byteindex(line, "utf-16", character, false) + 1, true)
        character = at and vim.str_utfindex(line, "utf-16", at - 1, false) or character
      end
      return range.start.line, character
    end
    local row, character = find_symbol(buf, symbol.children, name, encoding)
    if row then
      return row, character
    end
  end
end

local function rename(query, buf, client, deadline)
  local encoding = client.offset_encoding or "utf-16"
  local function at(row, character)
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = row, character = convert(line_of(buf, row), character, "utf-16", encoding) },
      newName = query.new_name,
    }
    request(client, methods.rename, params, buf, deadline, function(err, edit)
      if err then
        return answer(query.id, { error = message(client, err) })
      end
      if type(edit) ~= "table" then
        return answer(query.id, { error = "the language server cannot rename anything there" })
      end
      answer_edit(query, edit, encoding)
    end)
  end
  local name = query.symbol_name
  if query.line and (query.character or not name) then
    return at(query.line, query.character or 0)
  end
  if query.line then
    local line = line_of(buf, query.line)
    local from = line:find("%f[%w_]" .. vim.pesc(name) .. "%f[^%w_]")
    if not from then
      return answer(query.id, { error = ("%s is not on line %d"):format(name, query.line + 1) })
    end
    return at(query.line, vim.str_utfindex(line, "utf-16", from - 1, false))
  end
  local lister = vim.lsp.get_clients({ bufnr = buf, method = "textDocument/documentSymbol" })[1]
  if not lister then
    return answer(query.id, { error = "no language server lists the file's symbols: give line and column" })
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) } }
  request(lister, "textDocument/documentSymbol", params, buf, deadline, function(err, symbols)
    if err then
      return answer(query.id, { error = message(lister, err) })
    end
    local row, character = find_symbol(buf, symbols, name, lister.offset_encoding or "utf-16")
    if not row then
      return answer(query.id, { error = ("no symbol named %s in %s"):format(name, vim.fs.basename(query.path)) })
    end
    at(row, character)
  end)
end

--- The client's diagnostics on lines `first`..`last`, as it sent them.
local function diagnostics(buf, client, first, last)
  local found = {}
  for _, pull in ipairs({ false, true }) do
    for _, d in ipairs(vim.diagnostic.get(buf, { namespace = vim.lsp.diagnostic.get_namespace(client.id, pull) })) do
      if d.lnum <= last and (d.end_lnum or d.lnum) >= first and d.user_data and d.user_data.lsp then
        found[#found + 1] = d.user_data.lsp
      end
    end
  end
  return found
end

local function remember(client, buf, action)
  next_id = next_id + 1
  local id = tostring(next_id)
  listed[id] = { client_id = client.id, path = vim.api.nvim_buf_get_name(buf), action = action }
  order[#order + 1] = id
  if #order > KEEP then
    listed[table.remove(order, 1)] = nil
  end
  return id
end

local function code_actions(query, buf, clients, deadline)
  local list, errors, pending = {}, {}, #clients
  for _, client in ipairs(clients) do
    local encoding = client.offset_encoding or "utf-16"
    local range = {
      start = { line = query.line, character = convert(line_of(buf, query.line), query.character, "utf-16", encoding) },
      ["end"] = {
        line = query.end_line,
        character = convert(line_of(buf, query.end_line), query.end_character, "utf-16", encoding),
      },
    }
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      range = range,
      context = { diagnostics = diagnostics(buf, client, query.line, query.end_line), triggerKind = 1 },
    }
    request(client, methods.code_actions, params, buf, deadline, function(err, actions)
      if err then
        errors[#errors + 1] = message(client, err)
      end
      for _, action in ipairs(type(actions) == "table" and actions or {}) do
        list[#list + 1] = { id = remember(client, buf, action), title = action.title, kind = action.kind or "" }
      end
      pending = pending - 1
      if pending == 0 then
        if #list == 0 and #errors > 0 then
          return answer(query.id, { error = table.concat(errors, "; ") })
        end
        answer(query.id, { result = { actions = list } })
      end
    end)
  end
end

local COMMAND_ONLY = "code action %q only runs a command in the language server (%s), whose edits could not be"
  .. " reviewed first; such actions are not supported"

--- Applies a listed action's edit: resolved first when the server wants that.
local function apply_action(query)
  local entry = listed[query.action_id]
  if not entry then
    return answer(
      query.id,
      { error = ("no code action %s: list them again with get_code_actions"):format(query.action_id) }
    )
  end
  local client = vim.lsp.get_client_by_id(entry.client_id)
  if not client or client:is_stopped() then
    return answer(query.id, { error = "the language server that offered the action has stopped" })
  end
  local encoding = client.offset_encoding or "utf-16"
  local function finish(action)
    if type(action.command) == "string" or (not action.edit and action.command) then
      local command = type(action.command) == "table" and action.command.command or action.command
      return answer(query.id, { error = COMMAND_ONLY:format(action.title, command) })
    end
    if not action.edit then
      return answer(query.id, { error = ("code action %q changes nothing"):format(action.title) })
    end
    local note = action.command and "The action's follow-up command was not run." or nil
    answer_edit(query, action.edit, encoding, note)
  end
  local action = entry.action
  local is_command = type(action.command) == "string"
  if is_command or action.edit or not client:supports_method("codeAction/resolve") then
    return finish(action)
  end
  local deadline = vim.uv.now() + (query.timeout_ms or 5000)
  -- The file may have been let go of since the actions were listed.
  local buf = lsp_buffer.load({ id = query.id, path = entry.path })
  if not buf then
    return
  end
  request(client, "codeAction/resolve", action, buf, deadline, function(err, resolved)
    finish(not err and type(resolved) == "table" and resolved or action)
  end)
end

--- Watches a freshly loaded `buf` for its first diagnostics: a server
--- publishes them once it has analysed the file, and answers renames and
--- code actions (whose fixes need the diagnostics) only after that.
--- Returns `when_analysed(ready)`, which runs `ready` then, or after a while.
local function analysis(buf)
  local analysed, waiting = false, nil
  local started = vim.uv.now()
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    buffer = buf,
    once = true,
    callback = function()
      analysed = true
      if waiting then
        vim.schedule(waiting)
        waiting = nil
      end
    end,
  })
  return function(ready)
    if analysed then
      return ready()
    end
    local done = false
    local function go()
      if not done then
        done = true
        ready()
      end
    end
    waiting = go
    vim.defer_fn(go, math.max(M.diagnostics_ms - (vim.uv.now() - started), 1))
  end
end

--- Seam `lsp_edit`: starts `query` ({id, kind, path, ...}) and returns at
--- once; the answer follows as `lsp_answer`.
function M.request(query)
  if query.kind == "apply_action" then
    return apply_action(query)
  end
  local method = methods[query.kind]
  if not method then
    error("pi-ide: unknown LSP edit " .. tostring(query.kind), 0)
  end
  local when_analysed = function(ready)
    ready()
  end
  local buf, was_loaded = lsp_buffer.load(query, function(loaded)
    when_analysed = analysis(loaded)
  end, true)
  if not buf then
    return
  end
  lsp_buffer.with_clients(query, buf, was_loaded, method, function(clients, deadline)
    if query.kind == "format" then
      return format(query, buf, clients[1], deadline)
    end
    when_analysed(function()
      if query.kind == "rename" then
        rename(query, buf, clients[1], deadline)
      else
        code_actions(query, buf, clients, deadline)
      end
    end)
  end)
end

return M
