-- Builds a diff's tab: the file as on disk on the left (read-only), the
-- proposal on the right (editable), winbars that say what each side is and
-- which keys decide. Neovim's diff mode compares them, or, for large files,
-- hunks.lua draws the host's diff.
local keys = require("pi-ide.diff.keys")
local util = require("pi-ide.util")

local M = {}

local function escape_statusline(text)
  return (text:gsub("%%", "%%%%"))
end

local function set_lines(buf, side)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, side.lines)
  vim.bo[buf].eol = side.eol
  vim.bo[buf].fixeol = false
  vim.bo[buf].fileformat = side.crlf and "dos" or "unix"
end

local function make_buffer(name, side, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  set_lines(buf, side)
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

local function winbar(spec, dirty)
  local on = keys.configured()
  local parts = {
    ":w" .. (on.accept and ("/" .. on.accept) or "") .. " accept",
    ":q" .. (on.reject and ("/" .. on.reject) or "") .. " reject",
    ("%s: %s%s"):format(
      spec.client,
      vim.fn.fnamemodify(spec.path, ":~:."),
      spec.original_exists and "" or " (new file)"
    ),
  }
  local bar = escape_statusline(table.concat(parts, "  ·  "))
  if spec.original_path ~= spec.path then
    bar = bar .. escape_statusline("  ·  replaces " .. vim.fn.fnamemodify(spec.original_path, ":~:."))
  end
  if dirty then
    bar = "%#WarningMsg#⚠ unsaved changes in your buffer are not shown here%*  ·  " .. bar
  end
  return bar
end

-- The file changed on disk while the diff is open: show the new contents on
-- the left so the person decides against what is really there.
local function show_disk_change(entry, spec, left)
  if entry.closed or not vim.api.nvim_buf_is_valid(entry.original_buf) then
    return
  end
  local ok, lines = pcall(vim.fn.readfile, spec.original_path)
  if not ok then
    lines = { "" }
  end
  local buf = entry.original_buf
  vim.bo[buf].modifiable, vim.bo[buf].readonly = true, false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable, vim.bo[buf].readonly = false, true
  if vim.api.nvim_win_is_valid(left) then
    vim.wo[left].winbar = "%#WarningMsg#⚠ changed on disk since the agent proposed this%*"
  end
  vim.cmd("diffupdate")
  util.notify(
    ("%s changed on disk while its diff is open"):format(vim.fn.fnamemodify(spec.original_path, ":~:.")),
    vim.log.levels.WARN
  )
end

--- Opens the tab for `spec`, filling in `entry`'s buffers and tabpage.
--- `decide(entry, accepted)` runs on `:w` (true) and when the proposal's
--- buffer goes away (false).
function M.open(spec, entry, decide)
  local host_diff = spec.hunks ~= nil and spec.hunks ~= vim.NIL
  -- The large view bounds the highlighting work (hunks.lua).
  local filetype = vim.filetype.match({ filename = spec.path })
  local label = ("pi-ide://%d/%s"):format(spec.id, vim.fs.basename(spec.path))
  entry.original_buf = make_buffer(label .. " (on disk)", spec.original, filetype)
  vim.bo[entry.original_buf].modifiable = false
  vim.bo[entry.original_buf].readonly = true
  entry.proposed_buf = make_buffer(label .. " (proposed)", spec.proposed, filetype)
  vim.bo[entry.proposed_buf].buftype = "acwrite"
  vim.bo[entry.proposed_buf].bufhidden = "wipe"
  vim.bo[entry.proposed_buf].modified = false

  vim.cmd("tab sbuffer " .. entry.original_buf)
  entry.tabpage = vim.api.nvim_get_current_tabpage()
  local left = vim.api.nvim_get_current_win()
  local right = vim.api.nvim_open_win(entry.proposed_buf, true, { split = "right", win = left })
  local group = vim.api.nvim_create_augroup("PiIdeDiff" .. spec.id, { clear = true })
  if host_diff then
    require("pi-ide.diff.hunks").open(spec, entry, left, right, group)
  else
    for _, win in ipairs({ left, right }) do
      vim.api.nvim_win_call(win, function()
        vim.cmd("diffthis")
      end)
    end
  end
  local dirty_buf = util.file_buffer(spec.original_path)
  vim.wo[left].winbar = (spec.original_exists and "on disk" or "new file (empty)")
    .. (host_diff and " · large-file view" or "")
  vim.wo[right].winbar = winbar(spec, dirty_buf and vim.bo[dirty_buf].modified)

  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    buffer = entry.proposed_buf,
    callback = function()
      decide(entry, true)
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = group,
    buffer = entry.proposed_buf,
    callback = function()
      decide(entry, false)
      pcall(vim.api.nvim_del_augroup_by_id, group)
    end,
  })
  keys.map(entry)
  entry.stop_watching = require("pi-ide.diff.disk_watch").watch(spec.original_path, function()
    show_disk_change(entry, spec, left)
  end)
end

return M
