-- Inline suggestions: asks the connected pi agent (through the host) after
-- a pause in typing or on demand, shows the answer as ghost text, and lets
-- the person accept all of it, a word or a line. Every keystroke handler
-- does constant work: re-arm one timer, maybe cancel one request. This file
-- holds the requests and the public API; ghost.lua draws, keys.lua maps.
local config = require("pi-ide.config")
local ghost = require("pi-ide.suggest.ghost")
local host = require("pi-ide.host")
local menus = require("pi-ide.suggest.menus")
local seam = require("pi-ide.seam")
local util = require("pi-ide.util")

local M = {}

local uv = vim.uv

local timer = nil
-- Set by :PiIde suggest toggle; nil follows `suggestion.auto_trigger`.
local auto_override = nil
local next_token = 0
-- The request in flight: { token, buf, row, col, tick, manual }.
local pending = nil
-- The suggestion on screen: { buf, row, col, items, index }.
local shown = nil

local function options()
  return config.values.suggestion
end

local function auto()
  if auto_override == nil then
    return options().auto_trigger
  end
  return auto_override
end

local function cursor()
  local pos = vim.api.nvim_win_get_cursor(0)
  return pos[1] - 1, pos[2]
end

local function size_text(bytes)
  if bytes >= 1024 * 1024 then
    return ("%.1f MiB"):format(bytes / 1024 / 1024)
  end
  return ("%d KiB"):format(math.ceil(bytes / 1024))
end

--- Why `buf` gets no suggestions, or nil when it does.
function M.why_not(buf)
  local opts = options()
  if vim.b[buf].pi_ide_suggestion == false then
    return "vim.b.pi_ide_suggestion is false in this buffer"
  end
  if vim.bo[buf].buftype ~= "" or vim.api.nvim_buf_get_name(buf) == "" then
    return "this buffer is not a file"
  end
  local filetype = vim.bo[buf].filetype
  local by_filetype = opts.filetypes[filetype]
  if by_filetype == false then
    return ("option suggestion.filetypes turns them off for filetype %s"):format(filetype)
  end
  if by_filetype == nil and not opts.enabled then
    return "option suggestion.enabled is false"
  end
  local bytes = vim.api.nvim_buf_get_offset(buf, vim.api.nvim_buf_line_count(buf))
  if bytes > opts.max_file_size then
    return ("the buffer holds %s, over option suggestion.max_file_size (%s)"):format(
      size_text(bytes),
      size_text(opts.max_file_size)
    )
  end
  if opts.should_attach then
    local ok, attach = pcall(opts.should_attach, buf)
    if not ok then
      return "option suggestion.should_attach failed: " .. tostring(attach)
    end
    if not attach then
      return "option suggestion.should_attach returned false for this buffer"
    end
  end
  return nil
end

local function cancel_pending()
  if pending then
    seam.notify("suggest_cancel", pending.token)
    pending = nil
  end
end

local function render()
  if not shown then
    return
  end
  if menus.visible() then
    ghost.clear(shown.buf)
    return
  end
  ghost.show(shown.buf, shown.row, shown.col, shown.items[shown.index], shown.index, #shown.items)
end

--- Hides the suggestion and forgets it.
function M.dismiss()
  if shown then
    ghost.clear(shown.buf)
    shown = nil
  end
end

--- The visible suggestion's text, or nil.
---@return string|nil
function M.current()
  return shown and shown.items[shown.index] or nil
end

--- Whether a suggestion is on screen (none is while a completion menu is).
function M.visible()
  return shown ~= nil and not menus.visible()
end

--- "" or a short marker while a request is in flight, for statuslines.
function M.status()
  return pending and "pi…" or ""
end

local function windows(buf, row, col)
  local opts = options()
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local above = vim.api.nvim_buf_get_lines(buf, math.max(0, row - opts.lines_before), row, false)
  local below = vim.api.nvim_buf_get_lines(buf, row + 1, row + 1 + opts.lines_after, false)
  above[#above + 1] = line:sub(1, col)
  table.insert(below, 1, line:sub(col + 1))
  return table.concat(above, "\n"), table.concat(below, "\n")
end

--- Asks for suggestions at the cursor now.
local function request(manual)
  local buf = vim.api.nvim_get_current_buf()
  local why = M.why_not(buf)
  if why then
    if manual then
      util.notify("no suggestions here: " .. why, vim.log.levels.WARN)
    end
    return
  end
  if not host.has_client("pi") then
    if manual then
      util.notify("no pi agent is connected (run /ide in pi)", vim.log.levels.WARN)
    end
    return
  end
  cancel_pending()
  local row, col = cursor()
  local filetype = vim.bo[buf].filetype
  local before, after = windows(buf, row, col)
  local params = {
    buf = buf,
    row = row,
    col = col,
    filetype = filetype,
    path = vim.api.nvim_buf_get_name(buf),
    before = before,
    after = after,
    count = options().count,
    model = require("pi-ide.suggest.models").current(),
  }
  if not vim.tbl_contains(host.languages(), filetype) then
    local fallback = require("pi-ide.suggest.fallback_context").context(buf, row, col, filetype)
    if fallback then
      params.outline, params.scope, params.in_comment = fallback.outline, fallback.scope, fallback.in_comment
    end
  end
  next_token = next_token + 1
  params.token = next_token
  pending = {
    token = next_token,
    buf = buf,
    row = row,
    col = col,
    tick = vim.api.nvim_buf_get_changedtick(buf),
    manual = manual,
  }
  seam.notify("suggest", params)
end

local function trigger_if_still_typing()
  local mode = vim.api.nvim_get_mode().mode
  if auto() and mode:sub(1, 1) == "i" and not menus.visible() then
    request(false)
  end
end

local trigger_on_main_loop = vim.schedule_wrap(trigger_if_still_typing)

--- Seam `suggestions`: the answer for request `token`.
function M.on_result(token, suggestions, err)
  local asked = pending
  if not asked or asked.token ~= token then
    return
  end
  pending = nil
  local row, col = cursor()
  local same_place = vim.api.nvim_get_current_buf() == asked.buf
    and row == asked.row
    and col == asked.col
    and vim.api.nvim_buf_get_changedtick(asked.buf) == asked.tick
  if not same_place then
    return
  end
  if err ~= nil and err ~= vim.NIL then
    if asked.manual then
      util.notify("no suggestion: " .. tostring(err), vim.log.levels.WARN)
    end
    return
  end
  if type(suggestions) ~= "table" or #suggestions == 0 then
    if asked.manual then
      util.notify("the agent has no suggestion here")
    end
    return
  end
  shown = { buf = asked.buf, row = row, col = col, items = suggestions, index = 1 }
  render()
end

-- Keeps the suggestion if what was typed since it appeared is its beginning.
local function follow_typing()
  if not shown or vim.api.nvim_get_current_buf() ~= shown.buf then
    return false
  end
  local row, col = cursor()
  if row ~= shown.row or col < shown.col then
    return false
  end
  if col == shown.col then
    return true
  end
  local line = vim.api.nvim_get_current_line()
  local typed = line:sub(shown.col + 1, col)
  local kept = {}
  for _, item in ipairs(shown.items) do
    if vim.startswith(item, typed) and #item > #typed then
      kept[#kept + 1] = item:sub(#typed + 1)
    end
  end
  if #kept == 0 then
    return false
  end
  shown.items, shown.index, shown.col = kept, math.min(shown.index, #kept), col
  render()
  return true
end

--- TextChangedI / CursorMovedI: constant work per keystroke.
function M.on_typing()
  cancel_pending()
  if follow_typing() then
    return
  end
  M.dismiss()
  if auto() then
    timer = timer or uv.new_timer()
    timer:start(options().debounce_ms, 0, trigger_on_main_loop)
  end
end

--- InsertLeave, BufLeave, cursor moves outside insert mode.
function M.on_leave()
  if timer then
    timer:stop()
  end
  cancel_pending()
  M.dismiss()
end

local function next_word(text)
  return text:match("^%s*[%w_]+") or text:match("^%s*[^%w_%s]+") or text
end

local function next_line(text)
  if text:sub(1, 1) == "\n" then
    return "\n" .. (text:match("^\n([^\n]*)") or "")
  end
  local newline = text:find("\n", 1, true)
  return newline and text:sub(1, newline) or text
end

-- Inserts the start of the suggestion at the cursor as its own undo step.
local function insert(part)
  local text = shown.items[shown.index]
  local buf, row, col = shown.buf, shown.row, shown.col
  vim.o.undolevels = vim.o.undolevels
  local lines = vim.split(part, "\n", { plain = true })
  vim.api.nvim_buf_set_text(buf, row, col, row, col, lines)
  local end_row = row + #lines - 1
  local end_col = (#lines == 1 and col or 0) + #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { end_row + 1, end_col })
  local rest = text:sub(#part + 1)
  if rest == "" then
    M.dismiss()
  else
    shown.items, shown.index, shown.row, shown.col = { rest }, 1, end_row, end_col
    render()
  end
end

--- Accepts the whole suggestion.
function M.accept()
  if not shown then
    return false
  end
  insert(shown.items[shown.index])
  return true
end

--- Accepts the suggestion up to the end of its next word.
function M.accept_word()
  if not shown then
    return false
  end
  insert(next_word(shown.items[shown.index]))
  return true
end

--- Accepts the suggestion up to the end of its current line.
function M.accept_line()
  if not shown then
    return false
  end
  insert(next_line(shown.items[shown.index]))
  return true
end

local function cycle(step)
  if not shown then
    return false
  end
  shown.index = (shown.index - 1 + step) % #shown.items + 1
  render()
  return true
end

function M.next()
  return cycle(1)
end

function M.prev()
  return cycle(-1)
end

--- Manual trigger from a key or :PiIde suggest.
function M.trigger()
  M.dismiss()
  request(true)
end

--- Turns asking-while-typing on or off.
function M.toggle_auto()
  auto_override = not auto()
  util.notify("suggestions while typing: " .. (auto_override and "on" or "off"))
  return auto_override
end

-- A completion menu closed: the suggestion shows again, or is asked for.
local function menu_closed()
  if menus.visible() then
    return
  end
  -- A completion may have changed the text without TextChangedI.
  if shown and not follow_typing() then
    M.dismiss()
  end
  if shown then
    render()
  elseif auto() and vim.api.nvim_get_mode().mode:sub(1, 1) == "i" then
    timer = timer or uv.new_timer()
    timer:start(options().debounce_ms, 0, trigger_on_main_loop)
  end
end

-- A completion menu opened: hide the ghost text, drop the request.
local function menu_opened()
  cancel_pending()
  if shown then
    ghost.clear(shown.buf)
  end
end

--- CompleteChanged / CompleteDone, and blink.cmp's menu events.
function M.on_menu(args)
  if args and args.event == "User" then
    menus.on_blink(args)
  end
  if args and (args.event == "CompleteChanged" or args.match == "BlinkCmpMenuOpen") then
    menu_opened()
  end
  vim.schedule(menu_closed)
end

--- Says whether the current buffer gets suggestions, and why not.
function M.explain()
  local why = M.why_not(vim.api.nvim_get_current_buf())
  if why then
    util.notify("no suggestions in this buffer: " .. why)
  elseif not host.has_client("pi") then
    util.notify("suggestions are on in this buffer, but no pi agent is connected (run /ide in pi)")
  else
    util.notify(("suggestions are on in this buffer (%s)"):format(auto() and "while typing" or "on demand"))
  end
end

--- Installs the insert-mode keys (on the first InsertEnter, so mappings the
--- person made after setup() are the ones kept as fallbacks).
function M.map_keys(keys)
  require("pi-ide.suggest.keys").install(keys)
  menus.hook_cmp(function()
    vim.schedule(menu_opened)
  end, function()
    vim.schedule(menu_closed)
  end)
end

return M
