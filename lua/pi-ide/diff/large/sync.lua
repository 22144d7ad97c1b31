-- Keeps the two windows on corresponding lines, as 'scrollbind' and
-- 'cursorbind' do in diff mode: moving or scrolling in one window places
-- the other's cursor and top line on the matching lines. The window the
-- person acts in leads; the other only follows.
local M = {}

--- The line on the other side that corresponds to `line` (0-based);
--- `from` is 1 for the original side, 3 for the proposed one.
function M.corresponding(hunks, line, from)
  local to = from == 1 and 3 or 1
  local lo, hi, found = 1, #hunks, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    if hunks[mid][from] <= line then
      found, lo = mid, mid + 1
    else
      hi = mid - 1
    end
  end
  if not found then
    return line
  end
  local h = hunks[found]
  local offset = line - h[from]
  if offset < h[from + 1] then
    return h[to] + math.min(offset, math.max(h[to + 1] - 1, 0))
  end
  return line - (h[from] + h[from + 1]) + (h[to] + h[to + 1])
end

--- Links the view's two windows.
function M.attach(view, group)
  -- The top line each window was given, so the WinScrolled that follows is
  -- not sent back.
  local placed = {}
  local function side(win)
    return win == view.left and 1 or 3
  end
  -- Line `line` (1-based) of `source`'s side on the other side, unless the
  -- other's `current` line corresponds to it already (the mapping inside a
  -- hunk is not invertible: following back must not move anything).
  local function follow(line, current, from, count)
    local to = from == 1 and 3 or 1
    if current and M.corresponding(view.hunks, current - 1, to) + 1 == line then
      return current
    end
    return math.max(1, math.min(M.corresponding(view.hunks, line - 1, from) + 1, count))
  end
  local function push(source)
    local target = source == view.left and view.right or view.left
    if not (vim.api.nvim_win_is_valid(source) and vim.api.nvim_win_is_valid(target)) then
      return
    end
    local from = side(source)
    local count = vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(target))
    local src = vim.api.nvim_win_call(source, vim.fn.winsaveview)
    local now = vim.api.nvim_win_call(target, vim.fn.winsaveview)
    local lnum = follow(src.lnum, now.lnum, from, count)
    local top = follow(src.topline, now.topline, from, count)
    if lnum == now.lnum and top == now.topline then
      return
    end
    vim.api.nvim_win_call(target, function()
      vim.fn.winrestview({ lnum = lnum, col = src.col, curswant = src.curswant, topline = top })
    end)
    placed[target] = vim.fn.line("w0", target)
  end
  vim.api.nvim_create_autocmd("CursorMoved", {
    group = group,
    buffer = view.original_buf,
    callback = function()
      if vim.api.nvim_get_current_win() == view.left then
        push(view.left)
      end
    end,
  })
  vim.api.nvim_create_autocmd("CursorMoved", {
    group = group,
    buffer = view.proposed_buf,
    callback = function()
      if vim.api.nvim_get_current_win() == view.right then
        push(view.right)
      end
    end,
  })
  vim.api.nvim_create_autocmd("WinScrolled", {
    group = group,
    callback = function()
      local current = vim.api.nvim_get_current_win()
      for _, win in ipairs({ view.left, view.right }) do
        if vim.v.event[tostring(win)] and vim.api.nvim_win_is_valid(win) then
          local top = vim.fn.line("w0", win)
          -- The current window leads; the other leads only when it scrolled
          -- by itself (the mouse wheel), not because it followed.
          if win == current or (placed[win] ~= top and not vim.v.event[tostring(current)]) then
            push(win)
          end
          placed[win] = nil
        end
      end
    end,
  })
end

return M
