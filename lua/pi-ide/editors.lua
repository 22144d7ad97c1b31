-- What agents ask of the editor itself (Claude's openFile, getOpenEditors,
-- checkDocumentDirty, saveDocument): each call touches only the windows and
-- buffers it needs and never reads a whole buffer into Lua. The host
-- resolves paths and keeps them inside the workspace before calling.
local util = require("pi-ide.util")

local M = {}

local api = vim.api

--- Neovim's global cwd: the workspace folder the lockfile announces.
function M.workspace()
  return vim.fn.getcwd(-1, -1)
end

local function is_diff_buffer(buf)
  return vim.b[buf].pi_ide_diff ~= nil
end

-- A window a file may be shown in: a plain file window, not floating, not a
-- terminal, help, quickfix or diff side, not the preview window, and not
-- fixed to its buffer.
local function file_window(win)
  if api.nvim_win_get_config(win).relative ~= "" then
    return false
  end
  local buf = api.nvim_win_get_buf(win)
  if vim.bo[buf].buftype ~= "" or is_diff_buffer(buf) then
    return false
  end
  return not vim.wo[win].previewwindow and not vim.wo[win].winfixbuf
end

local function is_diff_tab(tab)
  for _, win in ipairs(api.nvim_tabpage_list_wins(tab)) do
    if is_diff_buffer(api.nvim_win_get_buf(win)) then
      return true
    end
  end
  return false
end

-- The last used file window of `tab`: its current window, else its previous
-- one (`wincmd p`), else the one whose buffer was used last. Nil in a diff
-- tab or when the tab has none.
local function last_used_window(tab)
  if is_diff_tab(tab) then
    return nil
  end
  local current = api.nvim_tabpage_get_win(tab)
  if file_window(current) then
    return current
  end
  local tabnr = api.nvim_tabpage_get_number(tab)
  local previous = vim.fn.win_getid(vim.fn.tabpagewinnr(tabnr, "#"), tabnr)
  if previous ~= 0 and file_window(previous) then
    return previous
  end
  local best, best_used
  for _, win in ipairs(api.nvim_tabpage_list_wins(tab)) do
    if file_window(win) then
      local used = vim.fn.getbufinfo(api.nvim_win_get_buf(win))[1].lastused
      if not best or used > best_used then
        best, best_used = win, used
      end
    end
  end
  return best
end

-- Shows `buf` in the current tab's last used file window and enters it. In
-- a diff tab it goes to another tab (the previous one first) or a new one;
-- in a tab of terminals it splits off the current window.
local function show(buf)
  local tab = api.nvim_get_current_tabpage()
  local win = last_used_window(tab)
  if not win and is_diff_tab(tab) then
    local previous = vim.fn.tabpagenr("#")
    local tabs = api.nvim_list_tabpages()
    if previous > 0 then
      table.insert(tabs, 1, tabs[previous])
    end
    for _, other in ipairs(tabs) do
      win = other ~= tab and last_used_window(other) or nil
      if win then
        break
      end
    end
    if not win then
      vim.cmd("tab sbuffer " .. buf)
      return api.nvim_get_current_win()
    end
  end
  if not win then
    return api.nvim_open_win(buf, true, { split = "left", win = 0 })
  end
  api.nvim_set_current_win(win)
  if api.nvim_win_get_buf(win) ~= buf then
    api.nvim_win_set_buf(win, buf)
  end
  return win
end

-- A search pattern matching `text` literally, across lines, case and all.
local function literal(text)
  return "\\V\\C" .. text:gsub("\\", "\\\\"):gsub("\n", "\\n")
end

-- {row, col} (1-based row, 0-based byte column) of the last character of
-- `text` when it starts at `at`.
local function last_char(at, text)
  text = text:gsub("\n+$", "")
  if text == "" then
    return at
  end
  local lines = vim.split(text, "\n", { plain = true })
  local last = lines[#lines]
  local col = #last + vim.str_utf_start(last, #last) - 1
  if #lines == 1 then
    return { at[1], at[2] + col }
  end
  return { at[1] + #lines - 1, col }
end

-- The 0-based byte column of the last character of row `row`.
local function end_of_line(buf, row)
  local line = api.nvim_buf_get_lines(buf, row - 1, row, true)[1]
  if line == "" then
    return 0
  end
  return #line + vim.str_utf_start(line, #line) - 1
end

-- In the current window: the cursor at `start_text`, or a charwise
-- selection from it to the end of `end_text` (or of the line).
local function select(buf, request)
  local win = api.nvim_get_current_win()
  api.nvim_win_set_cursor(win, { 1, 0 })
  local found = vim.fn.searchpos(literal(request.start_text), "cnW")
  if found[1] == 0 then
    return
  end
  local start = { found[1], found[2] - 1 }
  api.nvim_win_set_cursor(win, start)
  local finish
  if request.end_text then
    local to = vim.fn.searchpos(literal(request.end_text), "cnW")
    if to[1] ~= 0 then
      finish = last_char({ to[1], to[2] - 1 }, request.end_text)
    end
  end
  if request.select_to_end_of_line then
    local row = finish and finish[1] or start[1]
    finish = { row, end_of_line(buf, row) }
  end
  vim.cmd("normal! zv")
  if finish then
    vim.cmd("normal! v")
    api.nvim_win_set_cursor(win, finish)
  end
end

local function leave_visual_mode()
  local mode = api.nvim_get_mode().mode:sub(1, 1)
  if mode == "v" or mode == "V" or mode == "\22" then
    vim.cmd("normal! \27")
  end
end

-- In the current window: the cursor at 1-based `line` and 1-based UTF-16
-- `column` (clamped to the buffer).
local function place(buf, line, column)
  local row = math.max(1, math.min(line, api.nvim_buf_line_count(buf)))
  local text = api.nvim_buf_get_lines(buf, row - 1, row, true)[1]
  local units = math.max(0, (column or 1) - 1)
  local ok, col = pcall(vim.str_byteindex, text, "utf-16", units, false)
  if not ok then
    col = #text
  end
  api.nvim_win_set_cursor(0, { row, math.min(col, math.max(#text - 1, 0)) })
  vim.cmd("normal! zv")
end

--- Seam `open_file`: `request` = { path, start_text?, end_text?,
--- select_to_end_of_line, frontmost, line?, column? }. With frontmost false the buffer is
--- only loaded (and listed): no window, cursor or mode changes.
function M.open(request)
  local buf = vim.fn.bufadd(request.path)
  if request.frontmost then
    leave_visual_mode()
    show(buf)
    if request.line then
      place(buf, request.line, request.column)
    elseif request.start_text then
      select(buf, request)
    end
  else
    vim.fn.bufload(buf)
  end
  vim.bo[buf].buflisted = true
  local filetype = vim.bo[buf].filetype
  if filetype == "" then
    filetype = vim.filetype.match({ buf = buf }) or ""
  end
  return { filetype = filetype, line_count = api.nvim_buf_line_count(buf) }
end

--- Seam `open_editors`: { path, active, filetype, modified } per listed
--- file buffer.
function M.list()
  local current = api.nvim_get_current_buf()
  local editors = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if vim.bo[buf].buflisted and vim.bo[buf].buftype == "" and not is_diff_buffer(buf) then
      local path = api.nvim_buf_get_name(buf)
      if path ~= "" then
        editors[#editors + 1] = {
          path = path,
          active = buf == current,
          filetype = vim.bo[buf].filetype,
          modified = vim.bo[buf].modified,
        }
      end
    end
  end
  return editors
end

--- Seam `document_state`: { modified } of `path`'s buffer, nil without one.
function M.state(path)
  local buf = util.file_buffer(path)
  if not buf then
    return nil
  end
  return { modified = vim.bo[buf].modified }
end

--- Seam `buffer_text`: { lines, eol, crlf } of `path`'s loaded buffer, unsaved
--- edits included; nil without one.
function M.text(path)
  local buf = util.file_buffer(path)
  if not buf then
    return nil
  end
  -- A buffer nobody looks at may be older than its file; unsaved edits
  -- stay, and the answer says the file changed under them.
  local disk = require("pi-ide.disk").sync(buf)
  return {
    disk_changed = disk == "conflict" or nil,
    lines = api.nvim_buf_get_lines(buf, 0, -1, false),
    eol = require("pi-ide.mcp.text").eol(buf),
    crlf = vim.bo[buf].fileformat == "dos",
  }
end

--- Seam `save_document`: writes `path`'s buffer with :write, never a diff
--- buffer, never with a prompt, only while `path` leads to `real` (the file
--- the host checked). { ok, saved, message }, nil without a buffer.
function M.save(path, real)
  local buf = util.file_buffer(path)
  if not buf or is_diff_buffer(buf) then
    return nil
  end
  if not vim.bo[buf].modified then
    return { ok = true, saved = false, message = "No unsaved changes" }
  end
  if require("pi-ide.disk").sync(buf) == "conflict" then
    return {
      ok = false,
      saved = false,
      message = "The file changed on disk since Neovim read it: not overwritten",
    }
  end
  -- 'confirm' would turn a refusal (read-only file) into a dialog.
  local confirm = vim.o.confirm
  vim.o.confirm = false
  local ok, err = require("pi-ide.guard").write(buf, path, real, "silent write")
  vim.o.confirm = confirm
  if not ok then
    return { ok = false, saved = false, message = tostring(err) }
  end
  return { ok = true, saved = true, message = "Document saved" }
end

return M
