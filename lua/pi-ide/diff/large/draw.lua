-- Draws hunks with extmarks: changed lines, lines only one side has, filler
-- lines where a side has fewer, and the words that differ. Work is spread
-- over short steps of the main loop; a redraw after a re-diff touches only
-- the hunks that changed.
local hl = require("pi-ide.diff.large.highlight")
local util = require("pi-ide.util")

local M = {}

M.ns = vim.api.nvim_create_namespace("pi-ide-hunks")

-- Time a step of drawing may take: a 4 MB file with a change every few
-- lines has ~16,000 hunks at ~12 µs each, so a fixed count per step froze
-- Neovim for 5–11 ms on a loaded machine.
M.STEP_NS = 2e6
local FILLER = { { string.rep("-", 240), hl.FILLER } }
-- Above the line highlights, as DiffText is above DiffChange.
local WORD_PRIORITY = 4200

local function fillers(count)
  local lines = {}
  for i = 1, count do
    lines[i] = FILLER
  end
  return lines
end

--- Rows `[lo, hi)` that hunk `h` marks on side `s` (1 original, 3 proposed):
--- its lines, or the row its filler lines hang from.
function M.owned(h, s)
  if h[s + 1] > 0 then
    return h[s], h[s] + h[s + 1]
  end
  local lo = math.max(h[s] - 1, 0)
  return lo, lo + 1
end

-- Marks `len` lines from `start`: the first `changed` as changed, the rest
-- as `rest_group`; `missing` filler lines after them.
local function mark(buf, start, len, changed, rest_group, missing)
  local count = vim.api.nvim_buf_line_count(buf)
  if start >= count and len > 0 then
    return
  end
  if changed > 0 then
    vim.api.nvim_buf_set_extmark(buf, M.ns, start, 0, {
      end_row = math.min(start + changed, count),
      hl_group = hl.CHANGE,
      hl_eol = true,
      strict = false,
    })
  end
  if len > changed then
    vim.api.nvim_buf_set_extmark(buf, M.ns, start + changed, 0, {
      end_row = math.min(start + len, count),
      hl_group = rest_group,
      hl_eol = true,
      strict = false,
    })
  end
  if missing > 0 then
    local last = math.min(start + len - 1, count - 1)
    if last >= 0 then
      vim.api.nvim_buf_set_extmark(buf, M.ns, last, 0, { virt_lines = fillers(missing), strict = false })
    else
      vim.api.nvim_buf_set_extmark(buf, M.ns, 0, 0, { virt_lines = fillers(missing), virt_lines_above = true })
    end
  end
end

local function mark_words(view, h, w)
  if not w then
    return
  end
  for i = 1, #w - 3, 4 do
    local buf = w[i] == 0 and view.original_buf or view.proposed_buf
    local row = (w[i] == 0 and h[1] or h[3]) + w[i + 1]
    pcall(vim.api.nvim_buf_set_extmark, buf, M.ns, row, w[i + 2], {
      end_col = w[i + 3],
      hl_group = hl.TEXT,
      priority = WORD_PRIORITY,
      strict = false,
    })
  end
end

--- Draws hunk `h` (with word list `w`) into both buffers.
function M.hunk(view, h, w)
  local old_start, old_len, new_start, new_len = h[1], h[2], h[3], h[4]
  local changed = math.min(old_len, new_len)
  mark(view.original_buf, old_start, old_len, changed, hl.DELETE, new_len - old_len)
  mark(view.proposed_buf, new_start, new_len, changed, hl.ADD, old_len - new_len)
  mark_words(view, h, w)
end

--- Removes every mark of hunk `h` from both buffers.
function M.erase(view, h)
  for _, side in ipairs({ { view.original_buf, 1 }, { view.proposed_buf, 3 } }) do
    local lo, hi = M.owned(h, side[2])
    vim.api.nvim_buf_clear_namespace(side[1], M.ns, lo, hi)
  end
end

--- Draws hunks `first..last` of the view in steps of at most STEP_NS
--- (and one hunk); `done()` runs after the
--- last. A newer draw (view.generation changes) stops this one.
function M.steps(view, first, last, done)
  view.generation = (view.generation or 0) + 1
  local generation = view.generation
  view.drawing = true
  local at = first
  local function step()
    if view.closed or view.generation ~= generation then
      return
    end
    local deadline = vim.uv.hrtime() + M.STEP_NS
    repeat
      M.hunk(view, view.hunks[at], view.words[at])
      at = at + 1
    until at > last or vim.uv.hrtime() > deadline
    if at <= last then
      util.next_step(step)
    else
      view.drawing = false
      if done then
        done()
      end
    end
  end
  step()
end

--- Draws every hunk anew.
function M.all(view, done)
  for _, buf in ipairs({ view.original_buf, view.proposed_buf }) do
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  end
  M.steps(view, 1, #view.hunks, done)
end

local function same(a, b, wa, wb)
  if a[1] ~= b[1] or a[2] ~= b[2] or a[3] ~= b[3] or a[4] ~= b[4] then
    return false
  end
  wa, wb = wa or {}, wb or {}
  if #wa ~= #wb then
    return false
  end
  for i = 1, #wa do
    if wa[i] ~= wb[i] then
      return false
    end
  end
  return true
end

--- Replaces the view's hunks by a re-diff's, redrawing only those that
--- differ (hunks before and after them are kept, and so are their marks).
function M.replace(view, hunks, words, done)
  local old, old_words = view.hunks, view.words
  if view.drawing then
    view.hunks, view.words = hunks, words
    return M.all(view, done)
  end
  local prefix = 0
  while
    prefix < #old
    and prefix < #hunks
    and same(old[prefix + 1], hunks[prefix + 1], old_words[prefix + 1], words[prefix + 1])
  do
    prefix = prefix + 1
  end
  local suffix = 0
  while
    suffix < #old - prefix
    and suffix < #hunks - prefix
    and same(old[#old - suffix], hunks[#hunks - suffix], old_words[#old - suffix], words[#hunks - suffix])
  do
    suffix = suffix + 1
  end
  view.hunks, view.words = hunks, words
  if prefix == #old and prefix == #hunks then
    if done then
      done()
    end
    return
  end
  -- Clear what lies between the kept hunks, on each side.
  for _, side in ipairs({ { view.original_buf, 1 }, { view.proposed_buf, 3 } }) do
    local buf, s = side[1], side[2]
    local lo = prefix > 0 and select(2, M.owned(hunks[prefix], s)) or 0
    local hi = suffix > 0 and M.owned(hunks[#hunks - suffix + 1], s) or vim.api.nvim_buf_line_count(buf)
    if hi > lo then
      vim.api.nvim_buf_clear_namespace(buf, M.ns, lo, hi)
    end
  end
  M.steps(view, prefix + 1, #hunks - suffix, done)
end

return M
