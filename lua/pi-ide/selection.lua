-- Tracks the cursor and selection of real file buffers. Each event only
-- re-arms one reusable timer; when the person pauses, the positions go to the
-- host in one notification and the host reads the selected text itself.
-- They go while an agent is connected, or while the host keeps the place
-- for agents that ask without a connection (Codex, before each prompt).
-- When the current window shows no file (help, a diff's proposal), the host
-- hears that once, for pi's context socket; a terminal (where the agent
-- runs) keeps the last file.
local config = require("pi-ide.config")
local host = require("pi-ide.host")
local seam = require("pi-ide.seam")

local M = {}

local uv = vim.uv
local timer = nil
local last = nil -- positions of the last real file buffer seen
local told_no_file = false -- `no_file` sent, and no file seen since

local visual_kind = { v = "char", V = "line", ["\22"] = "block" }

--- Positions of the current window if it shows a real file, else nil.
local function current()
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].buftype ~= "" then
    return nil
  end
  local path = vim.api.nvim_buf_get_name(buf)
  if path == "" then
    return nil
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  local kind = visual_kind[vim.api.nvim_get_mode().mode:sub(1, 1)]
  if not kind then
    return { buf = buf, path = path, mode = "cursor", start = { row, col }, ["end"] = { row, col } }
  end
  local v = vim.fn.getpos("v")
  local vrow, vcol = v[2] - 1, v[3] - 1
  local start, finish = { vrow, vcol }, { row, col }
  if vrow > row or (vrow == row and vcol > col) then
    start, finish = finish, start
  end
  if kind == "block" then
    -- Rows ordered top to bottom; the host orders the columns.
    start, finish = { math.min(vrow, row), vcol }, { math.max(vrow, row), col }
  end
  return { buf = buf, path = path, mode = kind, start = start, ["end"] = finish }
end

local function fire()
  local positions = current()
  if positions then
    last = positions
  end
  if host.client_count() == 0 and not host.keeps_place() then
    told_no_file = false
  elseif positions then
    told_no_file = false
    seam.notify("selection", positions)
  elseif vim.bo.buftype == "terminal" then
    -- Most likely the agent's own terminal: the file the person came from
    -- is still what they are working on.
    return
  elseif not told_no_file then
    told_no_file = true
    seam.notify("no_file")
  end
end

local fire_on_main_loop = vim.schedule_wrap(fire)

--- The autocmd callback: microseconds, no allocation beyond the timer call.
function M.on_event()
  timer = timer or uv.new_timer()
  timer:start(config.values.selection.debounce_ms, 0, fire_on_main_loop)
end

--- Position of the current window, nil unless it shows a real file.
--- Seam `current_positions`, for getCurrentSelection.
M.current = current

--- Seam `selected_rows`: rows `first..upto` (0-based) of `buf` with at most
--- `max_bytes` of text in all: rows past that are left out and the last one
--- read is cut. The cost is bounded whatever the lines' lengths: no row is
--- copied whole, rows are counted by their byte offsets.
---@param buf integer
---@param first integer
---@param upto integer
---@param max_bytes integer
---@return string[]
function M.rows(buf, first, upto, max_bytes)
  if not vim.api.nvim_buf_is_loaded(buf) then
    return {}
  end
  local stop = math.min(upto, vim.api.nvim_buf_line_count(buf) - 1)
  if stop < first then
    return {}
  end
  local base = vim.api.nvim_buf_get_offset(buf, first)
  local function before(row)
    return vim.api.nvim_buf_get_offset(buf, row) - base
  end
  -- The last row that starts within max_bytes.
  local lo, hi = first, stop
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if before(mid) <= max_bytes then
      lo = mid
    else
      hi = mid - 1
    end
  end
  local rows = vim.api.nvim_buf_get_lines(buf, first, lo, false)
  local left = math.max(max_bytes - before(lo), 0)
  rows[#rows + 1] = vim.api.nvim_buf_get_text(buf, lo, 0, lo, left, {})[1] or ""
  return rows
end

--- Current position, or the last real file position (e.g. while the person
--- is in a terminal running the agent). Seam `positions`, on `initialize`.
function M.positions()
  return current() or last
end

return M
