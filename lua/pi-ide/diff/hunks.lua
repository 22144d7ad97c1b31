-- The large-file view: a diff the host computed, drawn without Neovim's
-- diff mode (which stalls the UI on large files). It aims to behave like
-- diff mode: changed lines and words highlighted (colours that show in 256
-- colours too), filler lines, the windows' cursors and scrolling bound,
-- folds of unchanged text, ]c / [c, do / dp, syntax highlighting, and the
-- proposal re-diffed by the host as it is edited. The parts live in
-- large/; this file keeps the open views and the functions others call.
local draw = require("pi-ide.diff.large.draw")
local edits = require("pi-ide.diff.large.edits")
local folds = require("pi-ide.diff.large.folds")
local hl = require("pi-ide.diff.large.highlight")
local keys = require("pi-ide.diff.large.keys")
local sync = require("pi-ide.diff.large.sync")
local syntax = require("pi-ide.diff.large.syntax")

local M = {}

local views = {} -- host diff id -> view
local by_buf = {} -- buffer -> view

-- The hunks arrive as {old_start, old_len, new_start, new_len} (0-based).
local function plain(list)
  if list == nil or list == vim.NIL then
    return {}
  end
  return list
end

-- Words arrive as one flat list of `hunk, side, row, start, end` (see
-- src/diff/words.rs); drawing wants one list of `side, row, start, end`
-- per hunk (1-based like the hunks; false for a hunk without any).
local function by_hunk(flat, count)
  local words = {}
  for i = 1, count do
    words[i] = false
  end
  flat = plain(flat)
  for i = 1, #flat - 4, 5 do
    local hunk = flat[i] + 1
    local list = words[hunk]
    if not list then
      list = {}
      words[hunk] = list
    end
    local n = #list
    list[n + 1], list[n + 2], list[n + 3], list[n + 4] = flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4]
  end
  return words
end

--- Adds a part of a large diff's hunks to `into` ({hunks, words}):
--- `list` from index `first` (0-based), with their words (see by_hunk).
function M.collect(into, first, list, flat)
  local hunks, words = into.hunks, into.words
  for i = 1, #list do
    hunks[first + i] = list[i]
    words[first + i] = false
  end
  flat = plain(flat)
  for i = 1, #flat - 4, 5 do
    local hunk = flat[i] + 1
    local w = words[hunk]
    if not w then
      w = {}
      words[hunk] = w
    end
    local n = #w
    w[n + 1], w[n + 2], w[n + 3], w[n + 4] = flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4]
  end
end

--- Index of the hunk of `view` under `row` (0-based) of side `s` (1 the
--- original, 3 the proposal): the hunk whose lines hold the row or, for a
--- hunk with no lines on that side, whose filler lines touch it.
local function index_at(view, s, row)
  local hunks = view.hunks
  local lo, hi, found = 1, #hunks, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    if hunks[mid][s] <= row + 1 then
      found, lo = mid, mid + 1
    else
      hi = mid - 1
    end
  end
  for i = found or 0, math.max((found or 0) - 1, 1), -1 do
    local h = hunks[i]
    if h[s + 1] > 0 and h[s] <= row and row < h[s] + h[s + 1] then
      return i
    end
    if h[s + 1] == 0 and (row == h[s] or row == h[s] - 1) then
      return i
    end
  end
  return nil
end

--- The hunk under line `line` (0-based) of `buf`, a large view's proposal
--- (or on-disk) buffer, as currently drawn: `{old_start, old_len,
--- new_start, new_len}`, 0-based. Nil when the line is unchanged or `buf`
--- is no large view's.
function M.hunk_at(buf, line)
  local view = by_buf[buf]
  if not view then
    return nil
  end
  local i = index_at(view, buf == view.proposed_buf and 3 or 1, line)
  if not i then
    return nil
  end
  local h = view.hunks[i]
  return { h[1], h[2], h[3], h[4] }
end

--- Every hunk of the view of `buf` as currently drawn (copies).
function M.hunks(buf)
  local view = by_buf[buf]
  if not view then
    return nil
  end
  return vim.tbl_map(function(h)
    return { h[1], h[2], h[3], h[4] }
  end, view.hunks)
end

-- Window options of the large view, as diff mode sets them.
local function dress(view)
  for _, win in ipairs({ view.left, view.right }) do
    local wo = vim.wo[win]
    wo.scrollbind, wo.cursorbind, wo.wrap = false, false, false
    wo.foldmethod, wo.foldenable, wo.foldlevel, wo.foldcolumn = "manual", true, 0, "0"
  end
end

local function close(view)
  if view.closed then
    return
  end
  view.closed = true
  edits.detach(view)
  views[view.id] = nil
  by_buf[view.original_buf], by_buf[view.proposed_buf] = nil, nil
end

--- Shows diff `entry` in `left` (on disk) and `right` (proposal): its
--- buffers and the hunks the host computed, `entry.host_hunks` ({hunks,
--- words}, collected part by part).
function M.open(entry, left, right, group)
  hl.setup()
  local view = {
    id = entry.id,
    original_buf = entry.original_buf,
    proposed_buf = entry.proposed_buf,
    left = left,
    right = right,
    hunks = entry.host_hunks.hunks,
    words = entry.host_hunks.words,
  }
  views[view.id], by_buf[view.original_buf], by_buf[view.proposed_buf] = view, view, view
  -- Removes hunk `i` and its marks: its change was just undone.
  function view.settle(i)
    draw.erase(view, view.hunks[i])
    table.remove(view.hunks, i)
    table.remove(view.words, i)
  end
  dress(view)
  for _, buf in ipairs({ view.original_buf, view.proposed_buf }) do
    syntax.bound(buf)
    vim.api.nvim_create_autocmd("BufWipeout", {
      group = group,
      buffer = buf,
      callback = function()
        close(view)
      end,
    })
  end
  sync.attach(view, group)
  keys.map(view, index_at)
  edits.attach(view)
  draw.all(view, function()
    folds.update(view)
  end)
end

--- The view of `buf` shows in `left` and `right` now (its tab was put
--- back together): bind, dress and fold those windows.
function M.rebind(buf, left, right)
  local view = by_buf[buf]
  if not view then
    return
  end
  view.left, view.right = left, right
  dress(view)
  folds.update(view)
end

--- Seam `diff_hunks`: the host re-diffed view `id` after edit `seq`.
function M.on_hunks(id, seq, hunks, words)
  local view = views[id]
  if not view or not edits.current(view, seq) then
    return
  end
  local previous = view.hunks
  hunks = plain(hunks)
  draw.replace(view, hunks, by_hunk(words, #hunks), function()
    folds.update(view, previous)
  end)
end

return M
