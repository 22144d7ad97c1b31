-- Draws a diff the host computed (large files), instead of Neovim's diff
-- mode: changed lines highlighted, filler lines where one side has fewer,
-- the two windows scrolled together, ]c / [c between hunks. Drawing is
-- spread over short steps so the UI never freezes.
local M = {}

local ns = vim.api.nvim_create_namespace("pi-ide-hunks")

-- Hunks drawn per step of the main loop.
local STEP = 400
local FILLER = { { string.rep("-", 240), "DiffDelete" } }

local function fillers(count)
  local lines = {}
  for i = 1, count do
    lines[i] = FILLER
  end
  return lines
end

-- Highlights `len` lines from `start`: the first `changed` as DiffChange,
-- the rest as `rest_group`; adds `missing` filler lines after them.
local function mark(buf, start, len, changed, rest_group, missing)
  if changed > 0 then
    vim.api.nvim_buf_set_extmark(
      buf,
      ns,
      start,
      0,
      { end_row = start + changed, hl_group = "DiffChange", hl_eol = true }
    )
  end
  if len > changed then
    vim.api.nvim_buf_set_extmark(
      buf,
      ns,
      start + changed,
      0,
      { end_row = start + len, hl_group = rest_group, hl_eol = true }
    )
  end
  if missing > 0 then
    local last = start + len - 1
    if last >= 0 then
      vim.api.nvim_buf_set_extmark(buf, ns, last, 0, { virt_lines = fillers(missing) })
    else
      vim.api.nvim_buf_set_extmark(buf, ns, 0, 0, { virt_lines = fillers(missing), virt_lines_above = true })
    end
  end
end

--- The line on the other side that corresponds to `line` (0-based);
--- `from` is 1 for the original side, 3 for the proposed one.
local function corresponding(hunks, line, from)
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

local function sync_scrolling(left, right, hunks, group)
  -- The topline each window was just given, so its own WinScrolled is not
  -- echoed back (the mapping inside a hunk is not exactly invertible).
  local placed = {}
  local function follow(source, target, side)
    local top = vim.api.nvim_win_call(source, vim.fn.winsaveview).topline
    if placed[source] == top then
      placed[source] = nil
      return
    end
    if not vim.api.nvim_win_is_valid(target) then
      return
    end
    local other = corresponding(hunks, top - 1, side) + 1
    placed[target] = other
    vim.api.nvim_win_call(target, function()
      vim.fn.winrestview({ topline = other })
    end)
  end
  vim.api.nvim_create_autocmd("WinScrolled", {
    group = group,
    callback = function()
      -- One event covers every window that scrolled since the last redraw.
      for _, pair in ipairs({ { left, right, 1 }, { right, left, 3 } }) do
        local scrolled = vim.v.event[tostring(pair[1])]
        if scrolled and scrolled.topline ~= 0 and vim.api.nvim_win_is_valid(pair[1]) then
          follow(pair[1], pair[2], pair[3])
        end
      end
    end,
  })
end

local function jump_keys(buf, hunks, side)
  local function jump(forward)
    local row = vim.api.nvim_win_get_cursor(0)[1] - 1
    local target
    for i = forward and 1 or #hunks, forward and #hunks or 1, forward and 1 or -1 do
      local start = hunks[i][side]
      if (forward and start > row) or (not forward and start < row) then
        target = start
        break
      end
    end
    if target then
      vim.api.nvim_win_set_cursor(0, { math.min(target + 1, vim.api.nvim_buf_line_count(buf)), 0 })
    end
  end
  vim.keymap.set("n", "]c", function()
    jump(true)
  end, { buffer = buf, desc = "pi-ide: next change" })
  vim.keymap.set("n", "[c", function()
    jump(false)
  end, { buffer = buf, desc = "pi-ide: previous change" })
end

--- Draws `hunks` ({old_start, old_len, new_start, new_len}, 0-based) into
--- the original and proposed buffers shown in `left` and `right`.
function M.render(original_buf, proposed_buf, left, right, hunks, group)
  for _, win in ipairs({ left, right }) do
    vim.wo[win].scrollbind, vim.wo[win].cursorbind, vim.wo[win].foldenable = false, false, false
  end
  sync_scrolling(left, right, hunks, group)
  jump_keys(original_buf, hunks, 1)
  jump_keys(proposed_buf, hunks, 3)
  local next_hunk = 1
  local function step()
    if not (vim.api.nvim_buf_is_valid(original_buf) and vim.api.nvim_buf_is_valid(proposed_buf)) then
      return
    end
    local last = math.min(#hunks, next_hunk + STEP - 1)
    for i = next_hunk, last do
      local old_start, old_len, new_start, new_len = unpack(hunks[i])
      local changed = math.min(old_len, new_len)
      mark(original_buf, old_start, old_len, changed, "DiffDelete", new_len - old_len)
      mark(proposed_buf, new_start, new_len, changed, "DiffAdd", old_len - new_len)
    end
    next_hunk = last + 1
    if next_hunk <= #hunks then
      vim.schedule(step)
    end
  end
  step()
end

return M
