-- Diff mode's keys for the large view, buffer-local: ]c / [c (with a
-- count) between changes, `do` in the proposal and `dp` on the left to
-- take the on-disk text of the change under the cursor.
local util = require("pi-ide.util")

local M = {}

--- Index of the first hunk whose start on side `s` is > row (forward) or
--- of the last whose start is < row (backward); nil when there is none.
local function neighbour(hunks, s, row, forward)
  local lo, hi, found = 1, #hunks, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local start = hunks[mid][s]
    if forward then
      if start > row then
        found, hi = mid, mid - 1
      else
        lo = mid + 1
      end
    elseif start < row then
      found, lo = mid, mid + 1
    else
      hi = mid - 1
    end
  end
  return found
end

local function jump(view, buf, s, forward)
  local count = vim.api.nvim_buf_line_count(buf)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local target
  for _ = 1, vim.v.count1 do
    local i = neighbour(view.hunks, s, target or row, forward)
    if not i then
      break
    end
    target = math.min(view.hunks[i][s], count - 1)
  end
  if target and target ~= row then
    vim.cmd("normal! m'")
    vim.api.nvim_win_set_cursor(0, { target + 1, 0 })
  end
end

local function take_original(view, hunk_at, s)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local i = hunk_at(view, s, row)
  if not i then
    util.notify("no change under the cursor", vim.log.levels.WARN)
    return
  end
  local h = view.hunks[i]
  local lines = vim.api.nvim_buf_get_lines(view.original_buf, h[1], h[1] + h[2], false)
  view.settle(i)
  vim.api.nvim_buf_set_lines(view.proposed_buf, h[3], h[3] + h[4], false, lines)
end

--- Maps the keys in both buffers; `hunk_at(view, side, row)` finds the
--- index of the hunk under a row.
function M.map(view, hunk_at)
  for _, side in ipairs({ { view.original_buf, 1 }, { view.proposed_buf, 3 } }) do
    local buf, s = side[1], side[2]
    vim.keymap.set("n", "]c", function()
      jump(view, buf, s, true)
    end, { buffer = buf, desc = "pi-ide: next change" })
    vim.keymap.set("n", "[c", function()
      jump(view, buf, s, false)
    end, { buffer = buf, desc = "pi-ide: previous change" })
  end
  vim.keymap.set("n", "do", function()
    take_original(view, hunk_at, 3)
  end, { buffer = view.proposed_buf, desc = "pi-ide: obtain the on-disk text of this change" })
  vim.keymap.set("n", "dp", function()
    take_original(view, hunk_at, 1)
  end, { buffer = view.original_buf, desc = "pi-ide: put the on-disk text of this change into the proposal" })
end

return M
