-- Deciding one hunk at a time. Accepting a hunk copies the proposal's text
-- into the left side (which then shows "on disk + accepted"); rejecting it
-- copies the on-disk text back into the proposal. Either way the hunk stops
-- being a difference, and `u` in that window takes the decision back. When
-- no difference is left, the diff is answered: FILE_SAVED with the proposal
-- as it now stands, or DIFF_REJECTED when it came back to the file on disk.
local M = {}

-- `{a_start, a_count, b_start, b_count}` (1-based, vim.diff's "indices";
-- a count of 0 means "after line start") for the two buffers as they are.
local function hunks(entry)
  if entry.host_hunks then
    -- The large view's hunks are 0-based; a side without lines starts
    -- before its row, which in vim.diff's terms is after the row above.
    local list = require("pi-ide.diff.hunks").hunks(entry.proposed_buf) or {}
    return vim.tbl_map(function(h)
      return { h[1] + (h[2] > 0 and 1 or 0), h[2], h[3] + (h[4] > 0 and 1 or 0), h[4] }
    end, list)
  end
  local function text(buf)
    return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
  end
  return vim.diff(text(entry.original_buf), text(entry.proposed_buf), { result_type = "indices" })
end

-- The hunk at 1-based `row` of `side` (1: on disk, 3: proposal); a hunk
-- with no lines on that side sits at the line before the gap, or line 1.
local function hunk_at(list, side, row)
  for _, hunk in ipairs(list) do
    local start, count = hunk[side], hunk[side + 1]
    if count == 0 and row == math.max(start, 1) then
      return hunk
    end
    if count > 0 and row >= start and row < start + count then
      return hunk
    end
  end
end

-- 0-based, end-exclusive range of one side of a hunk.
local function range(start, count)
  local first = count == 0 and start or start - 1
  return first, first + count
end

local function replace(buf, first, last, lines)
  local locked = not vim.bo[buf].modifiable
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  if locked then
    vim.bo[buf].modifiable = false
    vim.bo[buf].modified = false
  end
end

local function lines_of(buf, first, last)
  return vim.api.nvim_buf_get_lines(buf, first, last, false)
end

-- Answers the diff once nothing differs any more.
local function finish_if_done(entry, decide)
  local left = lines_of(entry.original_buf, 0, -1)
  local right = lines_of(entry.proposed_buf, 0, -1)
  if not vim.deep_equal(left, right) then
    return
  end
  decide(entry, not vim.deep_equal(right, entry.disk_lines))
end

local function act(entry, decide, accept)
  local buf = vim.api.nvim_get_current_buf()
  local side = buf == entry.original_buf and 1 or 3
  local hunk = hunk_at(hunks(entry), side, vim.api.nvim_win_get_cursor(0)[1])
  if not hunk then
    require("pi-ide.util").notify("no change under the cursor", vim.log.levels.WARN)
    return false
  end
  local a_first, a_last = range(hunk[1], hunk[2])
  local b_first, b_last = range(hunk[3], hunk[4])
  -- A large diff keeps its on-disk lines only in the left buffer, which
  -- accepting a hunk changes: read them before the first decision.
  entry.disk_lines = entry.disk_lines or lines_of(entry.original_buf, 0, -1)
  if accept then
    replace(entry.original_buf, a_first, a_last, lines_of(entry.proposed_buf, b_first, b_last))
  else
    replace(entry.proposed_buf, b_first, b_last, lines_of(entry.original_buf, a_first, a_last))
  end
  if not entry.host_hunks then
    vim.cmd("diffupdate")
  end
  finish_if_done(entry, decide)
  return true
end

--- Accepts the hunk under the cursor (either window).
function M.accept(entry, decide)
  return act(entry, decide, true)
end

--- Rejects the hunk under the cursor: the proposal gets the on-disk text.
function M.reject(entry, decide)
  return act(entry, decide, false)
end

--- Undo and redo in the on-disk window take back accepted hunks, although
--- the person cannot edit that side.
function M.map_undo(entry)
  for lhs, command in pairs({ u = "undo", ["<C-r>"] = "redo" }) do
    vim.keymap.set("n", lhs, function()
      local buf = entry.original_buf
      vim.bo[buf].modifiable = true
      pcall(vim.cmd, command)
      vim.bo[buf].modifiable = false
      vim.bo[buf].modified = false
      if not entry.host_hunks then
        vim.cmd("diffupdate")
      end
    end, { buffer = entry.original_buf, desc = "pi-ide: " .. command .. " a hunk decision" })
  end
end

return M
