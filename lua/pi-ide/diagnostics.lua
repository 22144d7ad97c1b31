-- Keeps the host's copy of vim.diagnostic current, so it answers
-- getDiagnostics without asking Neovim. The first change goes over at once;
-- changes in the next FLUSH_MS only mark their buffers, the first of them
-- tells the host an update is coming, and one timer sends them together. A
-- storm of changes is sent every FLUSH_MS and cannot starve the host.
local seam = require("pi-ide.seam")

local M = {}

local uv = vim.uv

local FLUSH_MS = 20

local timer = nil
local dirty = {} -- buf -> true, changed since the last flush
local armed = false -- a flush went out less than FLUSH_MS ago
local announced = false -- the host was told that dirty buffers are coming
local held = {} -- buf -> true, last sent with diagnostics: the host holds some

local function range(d)
  return {
    start = { line = d.lnum, character = d.col },
    ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
  }
end

-- The file a buffer's diagnostics belong to, or vim.NIL for buffers that
-- are no file (scratch, terminal, wiped).
local function uri(buf)
  if not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= "" then
    return vim.NIL
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return vim.NIL
  end
  return vim.uri_from_fname(name)
end

local function file(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return { buf = buf, uri = vim.NIL, diagnostics = {} }
  end
  local list = {}
  for i, d in ipairs(vim.diagnostic.get(buf)) do
    list[i] = { severity = d.severity, message = d.message, source = d.source, range = range(d) }
  end
  return { buf = buf, uri = uri(buf), diagnostics = list }
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

--- DiagnosticChanged: marks `args.buf`.
function M.on_change(args)
  mark(args.buf)
end

--- BufFilePost, BufWipeout: renaming or wiping a buffer moves or drops the
--- diagnostics the host holds for it; other buffers are no news.
function M.on_buffer(args)
  if held[args.buf] then
    mark(args.buf)
  end
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
