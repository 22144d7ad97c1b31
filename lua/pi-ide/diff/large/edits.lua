-- Follows edits of both buffers of a large view. Each change shifts the
-- hunks after it at once (so keys and scrolling stay right), and the
-- changed range of lines goes to the host after a pause (`diff_edited`),
-- which re-diffs off the UI thread and answers with `diff_hunks`.
local seam = require("pi-ide.seam")

local M = {}

M.DEBOUNCE_MS = 150

local SIDES = { original = 1, proposed = 3 }

-- Moves the hunks at or after a change of side `s` from `first` to `last`
-- (exclusive) that now ends at `new_last`.
local function shift(hunks, s, first, last, new_last)
  local delta = new_last - last
  if delta == 0 then
    return
  end
  -- The first hunk that ends at or after `first`.
  local lo, hi, from = 1, #hunks, #hunks + 1
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    if hunks[mid][s] + hunks[mid][s + 1] >= first then
      from, hi = mid, mid - 1
    else
      lo = mid + 1
    end
  end
  for i = from, #hunks do
    local h = hunks[i]
    if h[s] >= last then
      h[s] = h[s] + delta
    else
      h[s + 1] = math.max(0, h[s + 1] + delta)
    end
  end
end

-- Adds a change to the pending range of one side: `first`, the end it had
-- when last sent (`last`) and its end now (`new_last`).
local function merge(range, first, last, new_last)
  if not range then
    return { first = first, last = last, new_last = new_last }
  end
  local old_last = range.last
  if last > range.new_last then
    old_last = math.max(old_last, last + range.last - range.new_last)
  end
  return {
    first = math.min(range.first, first),
    last = old_last,
    new_last = math.max(range.new_last, last) + new_last - last,
  }
end

local function flush(view)
  if view.closed then
    return
  end
  for side, s in pairs(SIDES) do
    local range = view.pending[side]
    if range then
      view.pending[side] = nil
      local buf = s == 1 and view.original_buf or view.proposed_buf
      local lines = vim.api.nvim_buf_get_lines(buf, range.first, range.new_last, false)
      view.seq = view.seq + 1
      seam.notify("diff_edited", view.id, view.seq, side, range.first, range.last, lines)
    end
  end
end

--- Starts following the view's buffers.
function M.attach(view)
  view.seq, view.pending = 0, {}
  view.timer = vim.uv.new_timer()
  for side, s in pairs(SIDES) do
    local buf = s == 1 and view.original_buf or view.proposed_buf
    vim.api.nvim_buf_attach(buf, false, {
      on_lines = function(_, _, _, first, last, new_last)
        if view.closed then
          return true
        end
        shift(view.hunks, s, first, last, new_last)
        view.pending[side] = merge(view.pending[side], first, last, new_last)
        view.timer:stop()
        view.timer:start(M.DEBOUNCE_MS, 0, function()
          vim.schedule(function()
            flush(view)
          end)
        end)
      end,
    })
  end
end

--- True when hunks the host computed after edit `seq` still match the
--- buffers (no edit since).
function M.current(view, seq)
  return seq == view.seq and next(view.pending) == nil
end

--- Stops following (the view closed).
function M.detach(view)
  if view.timer and not view.timer:is_closing() then
    view.timer:stop()
    view.timer:close()
  end
end

return M
