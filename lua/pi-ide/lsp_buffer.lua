-- What the MCP tools' LSP requests share (lsp_tools.lua, edits/lsp.lua):
-- the answer to the host, position conversion between encodings, and
-- finding a file's language servers without ever making Neovim wait.
local M = {}

-- How often to look for a language server on a freshly loaded file.
local POLL_MS = 50
-- How long to wait for a server to attach before saying there is none.
M.attach_ms = 3000

--- Sends the `lsp_answer` event for request `id`.
function M.answer(id, payload)
  payload.id = id
  require("pi-ide.seam").notify("lsp_answer", payload)
end

--- `index` in `text` from encoding `from` to `to` ("utf-8", "utf-16",
--- "utf-32"); unchanged when the text is shorter than it says.
function M.convert(text, index, from, to)
  if from == to then
    return index
  end
  local ok, byte = pcall(vim.str_byteindex, text, from, index, false)
  if not ok then
    return index
  end
  return vim.str_utfindex(text, to, byte, false)
end

--- The buffer of `query.path`, loaded (without showing it) if it was not;
--- nil after answering when the file does not exist. `loaded(buf)` runs
--- right after a load, before any server can answer.
function M.load(query, loaded)
  if vim.fn.bufnr(query.path) == -1 and vim.fn.filereadable(query.path) == 0 then
    M.answer(query.id, { error = "no such file: " .. query.path })
    return nil
  end
  local buf = vim.fn.bufadd(query.path)
  local was_loaded = vim.api.nvim_buf_is_loaded(buf)
  if not was_loaded then
    vim.fn.bufload(buf)
    if loaded then
      loaded(buf)
    end
  end
  -- Neovim never checks a buffer no window shows: the servers now see the
  -- files as they are, and the old diagnostics of a reloaded one are no
  -- answer.
  for _, reloaded in ipairs(require("pi-ide.disk").refresh()) do
    require("pi-ide.diagnostics").expect_new(reloaded)
  end
  return buf, was_loaded
end

--- Calls `ready(clients, deadline)` once `buf` has language servers that
--- support `method`, polling while a freshly loaded file's servers attach;
--- answers `query` itself when there are none by the deadline.
function M.with_clients(query, buf, was_loaded, method, ready)
  local started = vim.uv.now()
  local deadline = started + (query.timeout_ms or 5000)
  -- A buffer loaded before had its servers attached then.
  local attach_until = was_loaded and started or started + math.min(M.attach_ms, query.timeout_ms or 5000)
  local function try()
    if not vim.api.nvim_buf_is_valid(buf) then
      return M.answer(query.id, { error = "the buffer of " .. query.path .. " is gone" })
    end
    local clients = vim.lsp.get_clients({ bufnr = buf, method = method })
    if #clients > 0 then
      return ready(clients, deadline)
    end
    local attached = #vim.lsp.get_clients({ bufnr = buf }) > 0
    if vim.uv.now() >= (attached and deadline or attach_until) then
      if attached then
        return M.answer(query.id, { error = "no language server of " .. query.path .. " supports " .. method })
      end
      return M.answer(query.id, { no_server = true, filetype = vim.bo[buf].filetype })
    end
    vim.defer_fn(try, POLL_MS)
  end
  try()
end

return M
