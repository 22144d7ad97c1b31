-- What the MCP tools' LSP requests share (mcp/lsp.lua, mcp/lsp_edits.lua):
-- the answer to the host, position conversion between encodings, and
-- finding a file's language servers without ever making Neovim wait. A
-- file the person has not loaded is loaded for the request and let go of
-- once it is answered, unless the person took it up meanwhile (a window
-- shows it, it is listed or has changes): Neovim then tells its servers
-- the file is closed, and their diagnostics of it go with it.
local M = {}

-- How often to look for a language server on a freshly loaded file.
local POLL_MS = 50
-- How long to wait for a server to attach before saying there is none.
M.attach_ms = 3000

-- Request id -> the buffer it keeps loaded; buffer -> how many requests do,
-- and whether it was in the buffer list before (then it is only unloaded).
local holding, holders, known_before = {}, {}, {}

local function hold(id, buf, existed)
  holding[id] = buf
  if not holders[buf] then
    known_before[buf] = existed
  end
  holders[buf] = (holders[buf] or 0) + 1
end

-- Lets go of the buffer request `id` loaded, once no request needs it.
local function release(id)
  local buf = holding[id]
  holding[id] = nil
  if not buf then
    return
  end
  holders[buf] = holders[buf] - 1
  if holders[buf] > 0 then
    return
  end
  holders[buf] = nil
  local existed = known_before[buf]
  known_before[buf] = nil
  if
    vim.api.nvim_buf_is_loaded(buf)
    and not vim.bo[buf].modified
    and not vim.bo[buf].buflisted
    and #vim.fn.win_findbuf(buf) == 0
  then
    pcall(vim.api.nvim_buf_delete, buf, { unload = existed })
  end
end

--- Sends the `lsp_answer` event for request `id`; a buffer loaded for it
--- is let go of.
function M.answer(id, payload)
  payload.id = id
  require("pi-ide.seam").notify("lsp_answer", payload)
  release(id)
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

--- The buffer of `query.path`, loaded (without showing it) if it was not,
--- and kept loaded until `query` is answered; nil after answering when the
--- file does not exist. `loaded(buf)` runs right after a load, before any
--- server can answer. `every_buffer`: bring every loaded buffer up to date
--- with its file, not only this one (an edit may touch any of them).
function M.load(query, loaded, every_buffer)
  local existed = vim.fn.bufnr(query.path) ~= -1
  if not existed and vim.fn.filereadable(query.path) == 0 then
    M.answer(query.id, { error = "no such file: " .. query.path })
    return nil
  end
  local buf = vim.fn.bufadd(query.path)
  local was_loaded = vim.api.nvim_buf_is_loaded(buf)
  if not was_loaded then
    hold(query.id, buf, existed)
    vim.fn.bufload(buf)
    if loaded then
      loaded(buf)
    end
  elseif holders[buf] then
    -- Loaded for another request still under way: this one needs it too.
    hold(query.id, buf, known_before[buf])
  end
  -- Neovim never checks a buffer no window shows: the servers now see the
  -- files as they are, and the old diagnostics of a reloaded one are no
  -- answer.
  local disk = require("pi-ide.disk")
  local reloaded = every_buffer and disk.refresh() or (was_loaded and disk.sync(buf) == "reloaded" and { buf })
  for _, changed in ipairs(reloaded or {}) do
    require("pi-ide.diagnostics").expect_new(changed)
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
