-- Folds of unchanged text, as diff mode's foldmethod=diff makes them: each
-- stretch between changes, less CONTEXT lines next to a change, becomes a
-- closed manual fold in both windows (created in steps). A re-diff that
-- moves the stretches makes them anew.
local util = require("pi-ide.util")

local M = {}

M.CONTEXT = 6
-- Time a step of folding may take (see draw.lua).
local STEP_NS = 2e6

--- The folds for `hunks` on side `s` (1 original, 3 proposed): 1-based
--- `{first, last}` line pairs.
function M.ranges(hunks, s, line_count)
  local out = {}
  local from = 0 -- first unchanged row of the current stretch (0-based)
  local function add(first, last, before, after)
    first = first + (before and M.CONTEXT or 0)
    last = last - (after and M.CONTEXT or 0)
    if last > first then
      out[#out + 1] = { first + 1, last + 1 }
    end
  end
  for i, h in ipairs(hunks) do
    add(from, h[s] - 1, i > 1, true)
    from = h[s] + h[s + 1]
  end
  add(from, line_count - 1, #hunks > 0, false)
  return out
end

local function equal(a, b)
  if #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i][1] ~= b[i][1] or a[i][2] ~= b[i][2] then
      return false
    end
  end
  return true
end

local function create(win, list, i)
  vim.api.nvim_win_call(win, function()
    vim.cmd(("silent! %d,%dfold"):format(list[i][1], list[i][2]))
  end)
end

--- Makes the folds of the view's hunks in both windows, unless they are
--- the ones `previous` (hunks) already made.
function M.update(view, previous)
  local sides, unchanged = {}, previous ~= nil and not view.folding
  for _, side in ipairs({ { view.left, view.original_buf, 1 }, { view.right, view.proposed_buf, 3 } }) do
    local win, buf, s = side[1], side[2], side[3]
    if not (vim.api.nvim_win_is_valid(win) and vim.api.nvim_buf_is_valid(buf)) then
      return
    end
    local count = vim.api.nvim_buf_line_count(buf)
    local list = M.ranges(view.hunks, s, count)
    unchanged = unchanged and equal(list, M.ranges(previous, s, count))
    sides[#sides + 1] = { win, list }
  end
  if unchanged then
    return
  end
  view.fold_generation = (view.fold_generation or 0) + 1
  local generation = view.fold_generation
  for _, side in ipairs(sides) do
    vim.api.nvim_win_call(side[1], function()
      local saved = vim.fn.winsaveview()
      vim.cmd("normal! zE")
      vim.fn.winrestview(saved)
    end)
  end
  view.folding = true
  local at = 1
  local total = math.max(#sides[1][2], #sides[2][2])
  local function step()
    if view.closed or view.fold_generation ~= generation then
      return
    end
    local deadline = vim.uv.hrtime() + STEP_NS
    repeat
      for _, side in ipairs(sides) do
        if at <= #side[2] and vim.api.nvim_win_is_valid(side[1]) then
          create(side[1], side[2], at)
        end
      end
      at = at + 1
    until at > total or vim.uv.hrtime() > deadline
    if at <= total then
      util.next_step(step)
    else
      view.folding = false
    end
  end
  -- After the drawing step that asked for it.
  vim.schedule(step)
end

return M
