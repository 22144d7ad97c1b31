-- Brings a buffer without unsaved edits up to date with its file, as one
-- undo step (`u` brings the old text back), changing only the lines that
-- differ: marks, extmarks, folds and each window's view stay with their
-- text. Neovim's own record of the file (its time and size) is updated
-- through its own check, so it never raises W11/W12 about this change
-- later; the check runs with 'autoread' held off and answers no prompt.
local M = {}

-- Above this size, or in an encoding other than UTF-8, Neovim reads the
-- file itself (`:edit`, which keeps undo up to 'undoreload' lines).
local DIFF_LIMIT = 4 * 1024 * 1024

-- The buffer being checked now: FileChangedShell handlers leave it alone.
M.checking = nil

--- Neovim's changed-since-read check of `buf` alone, answered here: the
--- reason it found ("changed", "conflict", "deleted", "time", "mode"), or
--- "" when the file is as Neovim last saw it. Neovim's record of the file
--- is current afterwards.
function M.check(buf)
  local reason = ""
  local id = vim.api.nvim_create_autocmd("FileChangedShell", {
    buffer = buf,
    callback = function()
      reason = vim.v.fcs_reason
      vim.v.fcs_choice = ""
    end,
  })
  local autoread = vim.api.nvim_get_option_value("autoread", { buf = buf, scope = "local" })
  vim.api.nvim_set_option_value("autoread", false, { buf = buf, scope = "local" })
  M.checking = buf
  pcall(vim.cmd.checktime, buf)
  M.checking = nil
  pcall(vim.api.nvim_del_autocmd, id)
  if vim.api.nvim_buf_is_valid(buf) then
    if autoread == nil then
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("set autoread<")
      end)
    else
      vim.api.nvim_set_option_value("autoread", autoread, { buf = buf, scope = "local" })
    end
  end
  return reason
end

-- The file's lines as the buffer would hold them, and whether it ends in a
-- newline; nil when Neovim must read it itself.
local function read_lines(buf, path)
  local encoding = vim.bo[buf].fileencoding
  if encoding ~= "" and encoding ~= "utf-8" then
    return nil
  end
  local fd = vim.uv.fs_open(path, "r", 0)
  if not fd then
    return nil
  end
  local stat = vim.uv.fs_fstat(fd)
  local data = stat and stat.size <= DIFF_LIMIT and vim.uv.fs_read(fd, stat.size, 0) or nil
  vim.uv.fs_close(fd)
  if not data or data:find("\0", 1, true) then
    return nil
  end
  local eol = data:sub(-1) == "\n"
  if eol then
    data = data:sub(1, -2)
  end
  local lines = vim.split(data, "\n", { plain = true })
  if vim.bo[buf].fileformat == "dos" then
    for i, line in ipairs(lines) do
      lines[i] = line:gsub("\r$", "")
    end
  end
  return lines, eol or data == ""
end

-- Where `row` (1-based) of the old text is in the new one, given the hunks.
local function moved(row, hunks)
  local shift = 0
  for _, hunk in ipairs(hunks) do
    local start_a, count_a, _, count_b = unpack(hunk)
    local last_a = start_a + count_a - 1
    if count_a > 0 and row >= start_a and row <= last_a then
      -- Inside a changed block: the same offset into it, kept inside.
      return start_a + shift + math.min(row - start_a, math.max(count_b - 1, 0))
    end
    if (count_a == 0 and start_a < row) or (count_a > 0 and last_a < row) then
      shift = shift + count_b - count_a
    end
  end
  return row + shift
end

-- Replaces the lines that differ, last hunk first, in one undo step.
local function apply(buf, old, new)
  local hunks = vim.diff(table.concat(old, "\n") .. "\n", table.concat(new, "\n") .. "\n", {
    result_type = "indices",
    algorithm = "histogram",
  })
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    views[win] = vim.api.nvim_win_call(win, vim.fn.winsaveview)
  end
  vim.api.nvim_buf_call(buf, function()
    -- A separate undo step from whatever came before.
    vim.bo.undolevels = vim.bo.undolevels
  end)
  -- Undo records whether the buffer was modified before each change; this
  -- one's "before" differs from the file, so undoing it marks it modified.
  vim.bo[buf].modified = true
  for i = #hunks, 1, -1 do
    local start_a, count_a, start_b, count_b = unpack(hunks[i])
    local first = count_a == 0 and start_a or start_a - 1
    vim.api.nvim_buf_set_lines(buf, first, first + count_a, false, vim.list_slice(new, start_b, start_b + count_b - 1))
  end
  for win, view in pairs(views) do
    if vim.api.nvim_win_is_valid(win) then
      view.lnum = math.max(1, math.min(moved(view.lnum, hunks), #new))
      view.topline = math.max(1, math.min(moved(view.topline, hunks), #new))
      vim.api.nvim_win_call(win, function()
        vim.fn.winrestview(view)
      end)
    end
  end
  return #hunks
end

--- Makes `buf` (no unsaved edits) hold its file's text. Returns how it
--- went: "same", "reloaded", "conflict" (it has unsaved edits) or
--- "deleted".
function M.reload(buf)
  if vim.bo[buf].modified then
    return "conflict"
  end
  local path = vim.api.nvim_buf_get_name(buf)
  local lines, eol = read_lines(buf, path)
  if not lines then
    if not vim.uv.fs_stat(path) then
      return "deleted"
    end
    vim.api.nvim_buf_call(buf, function()
      vim.cmd("silent keepalt keepjumps edit")
    end)
    return "reloaded"
  end
  local old = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local changed = not vim.deep_equal(old, lines) and apply(buf, old, lines) > 0
  if vim.bo[buf].eol ~= eol then
    vim.bo[buf].eol = eol
    changed = true
  end
  vim.bo[buf].modified = false
  return changed and "reloaded" or "same"
end

--- Neovim's check, then the reload when the file changed: what
--- `:checktime` does, without prompts, without wiping undo or marks.
--- Returns "same", "reloaded", "conflict" or "deleted".
function M.sync(buf)
  local reason = M.check(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return "same"
  end
  if reason == "deleted" or reason == "conflict" then
    return reason
  end
  if reason == "changed" then
    return M.reload(buf)
  end
  return "same"
end

return M
