-- Texts of files as MCP edits see them, and LSP edits applied to a copy of
-- such a text: never to a buffer, so nothing changes before the person
-- approves. Texts here have "\n" newlines, as the host reads them.
local util = require("pi-ide.util")

local M = {}

--- Whether `buf` is written with a final newline.
function M.eol(buf)
  return vim.bo[buf].eol or (vim.bo[buf].fixeol and not vim.bo[buf].binary)
end

--- `text` with "\r\n" newlines made "\n" when every newline is one (as the
--- host's Lines::split decides a file is CRLF).
function M.lf(text)
  if not text:find("\r\n", 1, true) then
    return text
  end
  local _, crlf = text:gsub("\r\n", "")
  local _, lf = text:gsub("\n", "")
  if crlf == lf then
    return (text:gsub("\r\n", "\n"))
  end
  return text
end

--- The text of `path`: its loaded buffer's (unsaved edits included), else
--- the file's; nil when neither exists.
function M.read(path)
  local buf = util.file_buffer(path)
  if buf then
    local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
    return M.eol(buf) and text .. "\n" or text
  end
  local file = io.open(path, "rb")
  if not file then
    return nil
  end
  local text = file:read("*a")
  file:close()
  return M.lf(text)
end

--- `text` with LSP `edits` (TextEdit[], positions in `encoding`) applied.
function M.apply_edits(text, edits, encoding)
  -- Byte index where each line starts (1-based); a line after a final
  -- newline starts past the end.
  local starts = { 1 }
  for at in text:gmatch("()\n") do
    starts[#starts + 1] = at + 1
  end
  local function offset(position)
    local row = position.line
    if row + 1 > #starts then
      return #text + 1
    end
    local first = starts[row + 1]
    local last = starts[row + 2] and starts[row + 2] - 2 or #text
    local line = text:sub(first, last)
    local ok, col = pcall(vim.str_byteindex, line, encoding or "utf-16", position.character, false)
    return first + (ok and col or #line)
  end
  local list = {}
  for i, edit in ipairs(edits) do
    local new_text = edit.newText or (edit.snippet and edit.snippet.value) or ""
    list[i] = {
      first = offset(edit.range.start),
      last = offset(edit.range["end"]),
      text = (new_text:gsub("\r\n", "\n")),
      order = i,
    }
  end
  -- From the end, so earlier offsets stay valid; of edits at one place the
  -- first listed ends up first.
  table.sort(list, function(a, b)
    if a.first ~= b.first then
      return a.first > b.first
    end
    return a.order > b.order
  end)
  for _, edit in ipairs(list) do
    text = text:sub(1, edit.first - 1) .. edit.text .. text:sub(math.max(edit.last, edit.first))
  end
  return text
end

--- The files a WorkspaceEdit changes, `{ {path, text}, ... }` with each
--- file's whole new text, or nil and why it cannot be shown as diffs.
function M.workspace_edit(edit, encoding)
  local by_uri, uris = {}, {}
  local function add(uri, edits)
    if not by_uri[uri] then
      by_uri[uri] = {}
      uris[#uris + 1] = uri
    end
    vim.list_extend(by_uri[uri], edits or {})
  end
  if type(edit.documentChanges) == "table" then
    for _, change in ipairs(edit.documentChanges) do
      if change.kind then
        return nil, ("the edit would %s a file, which cannot be reviewed as a diff"):format(change.kind)
      end
      add(change.textDocument.uri, change.edits)
    end
  elseif type(edit.changes) == "table" then
    for uri, edits in pairs(edit.changes) do
      add(uri, edits)
    end
  end
  local files = {}
  for _, uri in ipairs(uris) do
    local path = vim.uri_to_fname(uri)
    local text = M.read(path)
    if not text then
      return nil, "cannot read " .. path
    end
    files[#files + 1] = { path = path, text = M.apply_edits(text, by_uri[uri], encoding) }
  end
  table.sort(files, function(a, b)
    return a.path < b.path
  end)
  return files
end

return M
