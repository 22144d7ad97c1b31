-- Keeps the host's copy of vim.diagnostic current, so it answers
-- getDiagnostics without asking Neovim. The first change goes over at once;
-- changes in the next FLUSH_MS only mark their buffers, the first of them
-- tells the host an update is coming, and one timer sends them together. A
-- storm of changes is sent every FLUSH_MS and cannot starve the host.
--
-- The host also keeps what the servers reported for a file after its
-- buffer goes (MCP get_project_problems), so Neovim clearing a buffer's
-- diagnostics as a language server detaches is no report about the file:
-- that change is sent once the buffer is unloaded, and whatever was still
-- waiting to go is sent before it.
local seam = require("pi-ide.seam")

local M = {}

local uv = vim.uv

local FLUSH_MS = 20

local timer = nil
local dirty = {} -- buf -> true, changed since the last flush
local armed = false -- a flush went out less than FLUSH_MS ago
local announced = false -- the host was told that dirty buffers are coming
local held = {} -- buf -> true, last sent with diagnostics: the host holds some
local detaching = {} -- buf -> true while a language server detaches from it

-- What each buffer has had published since it was created, for MCP
-- get_file_problems to know when its servers' first diagnostics are in:
-- buf -> { namespaces = { [ns] = true }, empty = n }. A cleared list names
-- no namespace, so those are only counted.
local arrived = {}

--- Byte column `col` of line `lnum` of `buf` in UTF-16 code units, as LSP
--- clients expect; `lines` caches the buffer's lines by number.
local function utf16(buf, lnum, col, lines)
  if lines[lnum] == nil then
    lines[lnum] = vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1] or ""
  end
  local text = lines[lnum]
  if not text:find("[\128-\255]") then
    return col
  end
  local within = math.min(col, #text)
  return vim.str_utfindex(text, "utf-16", within, false) + (col - within)
end

local function range(d, buf, lines)
  local end_lnum, end_col = d.end_lnum or d.lnum, d.end_col or d.col
  return {
    start = { line = d.lnum, character = utf16(buf, d.lnum, d.col, lines) },
    ["end"] = { line = end_lnum, character = utf16(buf, end_lnum, end_col, lines) },
  }
end

--- `buf`'s diagnostics as { severity, message, source, range }, 0-based
--- with UTF-16 columns (vim.diagnostic keeps byte columns).
function M.of(buf)
  local list, lines = {}, {}
  for i, d in ipairs(vim.diagnostic.get(buf)) do
    list[i] = { severity = d.severity, message = d.message, source = d.source, range = range(d, buf, lines) }
  end
  return list
end

--- What `buf` has had published: { namespaces = { [ns] = true }, empty = n }.
function M.arrived(buf)
  return arrived[buf] or { namespaces = {}, empty = 0 }
end

-- The file a buffer's diagnostics belong to, or vim.NIL for buffers that
-- are no file (scratch, terminal, wiped). An unloaded buffer has some when
-- a server reported on a file no buffer holds.
local function uri(buf)
  if vim.bo[buf].buftype ~= "" then
    return vim.NIL
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return vim.NIL
  end
  return vim.uri_from_fname(name)
end

-- `loaded`: else the columns are bytes (M.of has no line to count in);
-- `modified`: the diagnostics are about unsaved text, not the file's.
local function file(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return { buf = buf, uri = vim.NIL, diagnostics = {} }
  end
  local loaded = vim.api.nvim_buf_is_loaded(buf)
  return {
    buf = buf,
    uri = uri(buf),
    diagnostics = M.of(buf),
    loaded = loaded,
    modified = loaded and vim.bo[buf].modified,
  }
end

-- `always`: send even when nothing changed, so the host knows it is current.
local function flush(always)
  announced = false
  if next(dirty) == nil and not always then
    return
  end
  local bufs = vim.tbl_keys(dirty)
  -- Cleared even when the host is not running: its start sends everything.
  dirty = {}
  table.sort(bufs)
  local files = {}
  for i, buf in ipairs(bufs) do
    files[i] = file(buf)
    held[buf] = #files[i].diagnostics > 0 or nil
  end
  seam.notify("diagnostics", files)
end

local on_timer
on_timer = vim.schedule_wrap(function()
  if next(dirty) == nil then
    armed = false
    return
  end
  flush(false)
  timer:start(FLUSH_MS, 0, on_timer)
end)

local function mark(buf)
  dirty[buf] = true
  if not armed then
    armed = true
    flush(false)
    timer = timer or uv.new_timer()
    timer:start(FLUSH_MS, 0, on_timer)
  elseif not announced then
    announced = true
    seam.notify("diagnostics_pending")
  end
end

--- Forgets what the servers published for `buf`: its text was reloaded, so
--- only diagnostics published from now on are about it.
function M.expect_new(buf)
  arrived[buf] = nil
end

--- DiagnosticChanged: marks `args.buf`.
function M.on_change(args)
  local seen = arrived[args.buf] or { namespaces = {}, empty = 0 }
  arrived[args.buf] = seen
  local list = args.data and args.data.diagnostics or {}
  if #list == 0 then
    seen.empty = seen.empty + 1
  end
  for _, d in ipairs(list) do
    seen.namespaces[d.namespace] = true
  end
  if detaching[args.buf] then
    -- Cleared because a server let go of the buffer: news once it is gone.
    local buf = args.buf
    vim.schedule(function()
      mark(buf)
    end)
    return
  end
  mark(args.buf)
end

--- LspDetach (just before Neovim clears that server's diagnostics of
--- `args.buf`): what the buffer had is sent first, as it was.
function M.on_detach(args)
  if dirty[args.buf] then
    flush(false)
  end
  local buf = args.buf
  detaching[buf] = true
  vim.schedule(function()
    detaching[buf] = nil
  end)
end

--- BufFilePost, BufWipeout, BufWritePost: renaming or wiping a buffer
--- moves or drops the diagnostics the host holds for it, writing it makes
--- them about its file; other buffers are no news.
function M.on_buffer(args)
  local buf = args.buf
  if args.event == "BufWipeout" then
    arrived[buf] = nil
  end
  if not held[buf] then
    return
  end
  if args.event ~= "BufWipeout" then
    return mark(buf)
  end
  -- Still loaded now, its diagnostics maybe cleared by the servers that
  -- detached: no news about its file. Sent once it is gone.
  vim.schedule(function()
    mark(buf)
  end)
end

--- True when no change is waiting to be sent: the next one goes at once.
---@return boolean
function M.idle()
  return not armed and next(dirty) == nil
end

--- Sends the diagnostics of every buffer that has some, now, even none: the
--- host has just started and waits for this first snapshot.
function M.send_all()
  held = {}
  for _, d in ipairs(vim.diagnostic.get()) do
    dirty[d.bufnr] = true
  end
  flush(true)
end

return M
