-- A review's tab: one file at a time, the working file itself on the right
-- (so comments land on real lines) and, when git has the file at HEAD, the
-- HEAD version on the left (the host runs git), read-only, in diff mode. `]f`/`[f` (option
-- `review.keymaps`) move between the files; the winbar says which keys
-- comment, jump, submit and cancel.
local config = require("pi-ide.config")
local util = require("pi-ide.util")

local M = {}

-- Option key → the <Plug> map it runs (plugin/pi-ide.lua defines them).
local plugs = {
  next = "<Plug>(PiIdeCommentNext)",
  prev = "<Plug>(PiIdeCommentPrev)",
  next_file = "<Plug>(PiIdeReviewNextFile)",
  prev_file = "<Plug>(PiIdeReviewPrevFile)",
}

--- The keys that are on: `{next = lhs?, prev = lhs?, ...}`.
local function configured()
  return util.keys_on(config.values.review and config.values.review.keymaps, plugs)
end

-- The working file's buffer, loaded; `created` when the review loaded it.
local function file_buffer(path)
  local created = util.file_buffer(path) == nil
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  vim.bo[buf].buflisted = true
  if vim.bo[buf].filetype == "" then
    local filetype = vim.filetype.match({ buf = buf })
    if filetype then
      vim.bo[buf].filetype = filetype
    end
  end
  return buf, created
end

local function head_buffer(s, entry, lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, ("pi-ide://review/%d/HEAD:%s"):format(s.id, entry.file))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = vim.bo[entry.buf].filetype
  vim.b[buf].pi_ide_review = s.id
  return buf
end

-- Maps the keys in `buf`, remembering a buffer-local map of the person's
-- that a key hides, to put it back when the review ends.
local function map_keys(s, buf)
  for name, lhs in pairs(configured()) do
    local previous = vim.api.nvim_buf_call(buf, function()
      return vim.fn.maparg(lhs, "n", false, true)
    end)
    if previous.buffer == 1 then
      s.hidden_maps[#s.hidden_maps + 1] = { buf = buf, map = previous }
    end
    vim.keymap.set("n", lhs, plugs[name], { buffer = buf, desc = "pi-ide: review " .. name:gsub("_", " ") })
    s.mapped[#s.mapped + 1] = { buf = buf, lhs = lhs }
  end
end

--- Loads every file of review `s` into `s.entries`, with its HEAD version
--- from `heads` (file -> lines, read by the host) when git has it.
function M.prepare(s, heads)
  s.entries, s.mapped, s.hidden_maps = {}, {}, {}
  for i, file in ipairs(s.files) do
    local entry = { file = file, path = vim.fs.joinpath(s.root, file) }
    s.entries[i] = entry
    entry.buf, entry.created = file_buffer(entry.path)
    local lines = type(heads) == "table" and heads[file] or nil
    if type(lines) == "table" then
      entry.base_buf = head_buffer(s, entry, lines)
    end
    map_keys(s, entry.buf)
    if entry.base_buf then
      map_keys(s, entry.base_buf)
    end
  end
end

--- The entry of review `s` whose file (or HEAD version: `head` true) `buf`
--- shows.
function M.entry_for(s, buf)
  for i, entry in ipairs(s.entries or {}) do
    if entry.buf == buf then
      return entry, i, false
    end
    if entry.base_buf == buf then
      return entry, i, true
    end
  end
  return nil
end

local function winbar(s, entry)
  local on = configured()
  local display = util.display_key
  local function pair(a, b, what)
    return (on[a] and on[b]) and ("%s/%s %s"):format(display(on[a]), display(on[b]), what) or nil
  end
  local parts = { ":PiIde comment" }
  parts[#parts + 1] = pair("next", "prev", "comments")
  if #s.entries > 1 then
    parts[#parts + 1] = pair("next_file", "prev_file", "files")
  end
  parts[#parts + 1] = ":PiIde review submit"
  parts[#parts + 1] = ":PiIde review cancel"
  local count = s.store:count()
  local about = ("%s%s · %d comment%s"):format(
    entry.file,
    #s.entries > 1 and (" (%d/%d)"):format(s.index, #s.entries) or "",
    count,
    count == 1 and "" or "s"
  )
  return util.escape_statusline(table.concat(parts, " · ")) .. " · %<" .. util.escape_statusline(about)
end

--- Shows the current file's name, the keys and the comment count.
function M.update_winbars(s)
  if not (s.tabpage and vim.api.nvim_tabpage_is_valid(s.tabpage)) then
    return
  end
  local entry = s.entries[s.index]
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(s.tabpage)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if buf == entry.buf then
      vim.wo[win].winbar = winbar(s, entry)
    elseif buf == entry.base_buf then
      vim.wo[win].winbar = "HEAD (read-only)"
    end
  end
end

local function is_ours(s, buf)
  return M.entry_for(s, buf) ~= nil
end

--- Shows file `index` of review `s` in its tab, which becomes current.
function M.show(s, index)
  s.index = index
  local entry = s.entries[index]
  if not vim.api.nvim_buf_is_valid(entry.buf) then
    -- Wiped while the review is open: load it again.
    entry.buf = file_buffer(entry.path)
    map_keys(s, entry.buf)
  end
  vim.api.nvim_set_current_tabpage(s.tabpage)
  local wins = vim.api.nvim_tabpage_list_wins(s.tabpage)
  local main = wins[#wins]
  for _, win in ipairs(wins) do
    if vim.api.nvim_win_get_config(win).relative == "" and is_ours(s, vim.api.nvim_win_get_buf(win)) then
      main = win
    end
  end
  for _, win in ipairs(wins) do
    if win ~= main then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  vim.api.nvim_win_call(main, function()
    vim.cmd("diffoff")
  end)
  vim.api.nvim_win_set_buf(main, entry.buf)
  if entry.base_buf and vim.api.nvim_buf_is_valid(entry.base_buf) then
    local left = vim.api.nvim_open_win(entry.base_buf, false, { split = "left", win = main })
    for _, win in ipairs({ left, main }) do
      vim.api.nvim_win_call(win, function()
        vim.cmd("diffthis")
      end)
    end
  end
  vim.api.nvim_set_current_win(main)
  M.update_winbars(s)
end

--- Opens review `s`'s tab on its first file.
function M.open(s)
  if vim.api.nvim_get_mode().mode:find("^[iR]") then
    vim.cmd("stopinsert")
  end
  vim.cmd("tab sbuffer " .. s.entries[1].buf)
  s.tabpage = vim.api.nvim_get_current_tabpage()
  M.show(s, 1)
end

--- Shows review `s` again after the person closed its tab or file window.
function M.restore(s)
  if not vim.api.nvim_tabpage_is_valid(s.tabpage) then
    vim.cmd("tab sbuffer " .. s.entries[s.index].buf)
    s.tabpage = vim.api.nvim_get_current_tabpage()
  end
  M.show(s, s.index)
end

--- Whether the current file of review `s` is still shown in its tab.
function M.intact(s)
  if not (s.tabpage and vim.api.nvim_tabpage_is_valid(s.tabpage)) then
    return false
  end
  local entry = s.entries[s.index]
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(s.tabpage)) do
    if vim.api.nvim_win_get_buf(win) == entry.buf then
      return true
    end
  end
  return false
end

local function unmap_keys(s)
  for _, map in ipairs(s.mapped or {}) do
    if vim.api.nvim_buf_is_valid(map.buf) then
      pcall(vim.keymap.del, "n", map.lhs, { buffer = map.buf })
    end
  end
  for _, hidden in ipairs(s.hidden_maps or {}) do
    if vim.api.nvim_buf_is_valid(hidden.buf) then
      vim.api.nvim_buf_call(hidden.buf, function()
        pcall(vim.fn.mapset, "n", false, hidden.map)
      end)
    end
  end
end

--- Takes review `s`'s tab, HEAD buffers and keys away. Working files the
--- review loaded go too, unless they are shown elsewhere or edited.
function M.close(s)
  unmap_keys(s)
  if s.tabpage and vim.api.nvim_tabpage_is_valid(s.tabpage) then
    if #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose " .. vim.api.nvim_tabpage_get_number(s.tabpage))
    else
      -- The only tab: keep one window on the file, out of diff mode.
      vim.api.nvim_set_current_tabpage(s.tabpage)
      pcall(vim.cmd, "silent! only!")
      vim.cmd("diffoff")
      local entry = s.entries[s.index]
      if entry and vim.api.nvim_buf_is_valid(entry.buf) then
        vim.api.nvim_win_set_buf(0, entry.buf)
      end
      vim.wo.winbar = ""
    end
  end
  for _, entry in ipairs(s.entries or {}) do
    if entry.base_buf and vim.api.nvim_buf_is_valid(entry.base_buf) then
      pcall(vim.api.nvim_buf_delete, entry.base_buf, { force = true })
    end
    local buf = entry.buf
    if
      entry.created
      and buf
      and vim.api.nvim_buf_is_valid(buf)
      and not vim.bo[buf].modified
      and #vim.fn.win_findbuf(buf) == 0
    then
      pcall(vim.api.nvim_buf_delete, buf, {})
    end
  end
end

return M
