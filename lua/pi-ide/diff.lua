-- The diff UI for openDiff: a tab with the file as on disk (left, read-only)
-- and the agent's proposal (right, editable). `:w` in the proposal accepts,
-- closing it rejects. Only ever touches its own buffers and windows.
local config = require("pi-ide.config")
local host = require("pi-ide.host")
local util = require("pi-ide.util")

local M = {}

local diffs = {} -- host diff id -> entry

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

local function entry_for(tab_name)
  for _, entry in pairs(diffs) do
    if tab_name == nil and entry.tabpage == vim.api.nvim_get_current_tabpage() then
      return entry
    end
    if tab_name ~= nil and entry.tab_name == tab_name then
      return entry
    end
  end
  local buf = vim.api.nvim_get_current_buf()
  for _, entry in pairs(diffs) do
    if tab_name == nil and (entry.proposed_buf == buf or entry.original_buf == buf) then
      return entry
    end
  end
  return nil
end

--- The proposal's text as the agent should write it.
local function proposal_text(buf)
  local newline = vim.bo[buf].fileformat == "dos" and "\r\n" or "\n"
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), newline)
  if vim.bo[buf].eol then
    text = text .. newline
  end
  return text
end

-- Removes the entry and its buffers (and so its windows and tab).
local function teardown(entry)
  if diffs[entry.id] ~= entry then
    return
  end
  diffs[entry.id] = nil
  if entry.stop_watching then
    entry.stop_watching()
  end
  vim.schedule(function()
    for _, buf in ipairs({ entry.proposed_buf, entry.original_buf }) do
      if vim.api.nvim_buf_is_valid(buf) then
        pcall(vim.api.nvim_buf_delete, buf, { force = true })
      end
    end
  end)
  util.emit("PiIdeDiffClosed", { tab_name = entry.tab_name, path = entry.path, accepted = entry.accepted })
end

-- Reports the person's decision to the host, once, then closes the diff.
local function decide(entry, accepted)
  if entry.decided then
    return
  end
  entry.decided, entry.accepted = true, accepted
  if accepted then
    host.notify("diff_decided", entry.id, true, proposal_text(entry.proposed_buf))
    require("pi-ide.reload").watch(entry.path)
  else
    host.notify("diff_decided", entry.id, false)
  end
  teardown(entry)
end

local function winbar(spec, dirty)
  local keys = config.values.diff.keymaps
  local accept = type(keys) == "table" and keys.accept or nil
  local reject = type(keys) == "table" and keys.reject or nil
  local parts = {
    ":w" .. (accept and ("/" .. accept) or "") .. " accept",
    ":q" .. (reject and ("/" .. reject) or "") .. " reject",
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

local function map_keys(entry)
  local keys = config.values.diff.keymaps
  if type(keys) ~= "table" then
    return
  end
  if type(keys.accept) == "string" then
    vim.keymap.set(
      "n",
      keys.accept,
      "<Plug>(PiIdeDiffAccept)",
      { buffer = entry.proposed_buf, desc = "pi-ide: accept" }
    )
  end
  if type(keys.reject) == "string" then
    for _, buf in ipairs({ entry.proposed_buf, entry.original_buf }) do
      vim.keymap.set("n", keys.reject, "<Plug>(PiIdeDiffReject)", { buffer = buf, desc = "pi-ide: reject" })
    end
  end
end

-- The file changed on disk while the diff is open: show the new contents on
-- the left so the person decides against what is really there.
local function show_disk_change(entry, spec, left)
  if diffs[entry.id] ~= entry or not vim.api.nvim_buf_is_valid(entry.original_buf) then
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

local function open(spec, entry)
  local host_diff = spec.hunks ~= nil and spec.hunks ~= vim.NIL
  -- Large files stay plain text: highlighting megabytes would freeze Neovim.
  local filetype = not host_diff and vim.filetype.match({ filename = spec.path }) or nil
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
    require("pi-ide.hunk_view").render(entry.original_buf, entry.proposed_buf, left, right, spec.hunks, group)
  else
    for _, win in ipairs({ left, right }) do
      vim.api.nvim_win_call(win, function()
        vim.cmd("diffthis")
      end)
    end
  end
  local dirty_buf = util.file_buffer(spec.original_path)
  vim.wo[left].winbar = spec.original_exists and "on disk" or "new file (empty)"
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
  map_keys(entry)
  entry.stop_watching = require("pi-ide.disk_watch").watch(spec.original_path, function()
    show_disk_change(entry, spec, left)
  end)
end

--- Host → Lua: show diff `spec`. An error makes the host answer DIFF_REJECTED.
function M._open(spec)
  local entry = {
    id = spec.id,
    tab_name = spec.tab_name,
    path = spec.path,
    client = spec.client,
    decided = false,
  }
  diffs[spec.id] = entry
  local ok, err = pcall(open, spec, entry)
  if not ok then
    entry.decided = true
    teardown(entry)
    error(err, 0)
  end
  util.emit("PiIdeDiffOpened", { tab_name = entry.tab_name, path = entry.path, client = entry.client })
  return true
end

--- Host → Lua: the agent (or shutdown) closed diff `id`; no decision is sent.
function M._close(id)
  local entry = diffs[id]
  if entry then
    entry.decided = true
    teardown(entry)
  end
end

--- Closes every diff without sending decisions (the host is gone).
function M.close_all()
  for id in pairs(diffs) do
    M._close(id)
  end
end

--- One table per open diff.
function M.list()
  local list = {}
  for _, entry in pairs(diffs) do
    list[#list + 1] = {
      tab_name = entry.tab_name,
      path = entry.path,
      client = entry.client,
      proposed_buf = entry.proposed_buf,
      original_buf = entry.original_buf,
      tabpage = entry.tabpage,
    }
  end
  table.sort(list, function(a, b)
    return a.tab_name < b.tab_name
  end)
  return list
end

local function resolve(tab_name, accepted)
  local entry = entry_for(tab_name)
  if not entry then
    util.notify(tab_name and ("no diff named %q"):format(tab_name) or "no pi-ide diff in this tab", vim.log.levels.WARN)
    return false
  end
  decide(entry, accepted)
  return true
end

--- Accepts a diff (default: the one in the current tab) with the person's edits.
function M.accept(tab_name)
  return resolve(tab_name, true)
end

--- Rejects a diff (default: the one in the current tab).
function M.reject(tab_name)
  return resolve(tab_name, false)
end

return M
