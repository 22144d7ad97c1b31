-- Review sessions (the context/review socket): an agent asks the person to review files; a
-- tab shows what changed in each (layout.lua), the person comments on lines
-- and ranges (store.lua, marks.lua, input.lua), then submits or cancels,
-- and the host gets the result once, as `review_done`. Nothing here waits:
-- the input is a floating window that calls back.
local input = require("pi-ide.review.input")
local layout = require("pi-ide.review.layout")
local marks = require("pi-ide.review.marks")
local store = require("pi-ide.review.store")
local util = require("pi-ide.util")

local M = {}

local current -- the open review, if any: at most one at a time

-- The relative paths of `review.files`, each checked to be a file under
-- `review.root`; raises with a message for the person otherwise.
local function checked_files(review)
  if type(review) ~= "table" or type(review.id) ~= "number" then
    error("cannot open the review: no review id", 0)
  end
  if type(review.root) ~= "string" or vim.fn.isdirectory(review.root) ~= 1 then
    error(("cannot open the review: %s is not a directory"):format(tostring(review.root)), 0)
  end
  local files = review.files
  if type(files) ~= "table" or #files == 0 then
    error("cannot open the review: no files to review", 0)
  end
  local seen, list = {}, {}
  for _, file in ipairs(files) do
    if type(file) ~= "string" or file == "" or file:sub(1, 1) == "/" then
      error(("cannot review %s: not a path relative to the project"):format(vim.inspect(file)), 0)
    end
    if vim.fn.filereadable(vim.fs.joinpath(review.root, file)) ~= 1 then
      error(("cannot review %s: no such file in %s"):format(file, review.root), 0)
    end
    if not seen[file] then
      seen[file] = true
      list[#list + 1] = file
    end
  end
  return list
end

-- The comments of review `s` as the host sends them to the agent.
local function result_comments(s)
  local comments = {}
  for _, item in ipairs(s.store:sorted()) do
    local comment = { file = item.file, line = item.first, text = item.c.text, context = vim.deepcopy(item.c.context) }
    if item.last ~= item.first then
      comment.endLine = item.last
    end
    comments[#comments + 1] = comment
  end
  return comments
end

-- Ends review `s` once: "submitted" and "cancelled" tell the host (the
-- agent gets the comments of a submitted review); "closed" (the agent went
-- away) tells nobody.
local function finish(s, status, reason)
  if s.ended then
    return false
  end
  s.ended = true
  if current == s then
    current = nil
  end
  if status ~= "closed" then
    local comments = status == "submitted" and result_comments(s) or {}
    local sent = require("pi-ide.seam").notify("review_done", { id = s.id, status = status, comments = comments })
    if not sent then
      util.notify("the host is not running: the review's result could not be sent", vim.log.levels.WARN)
    end
  end
  input.close()
  pcall(vim.api.nvim_del_augroup_by_id, s.group)
  s.store:erase_all()
  local ok, err = pcall(layout.close, s)
  if not ok then
    util.notify("closing the review tab: " .. tostring(err), vim.log.levels.WARN)
  end
  util.emit("PiIdeReviewClosed", { status = status, reason = reason })
  return true
end

-- The person closed the review's tab or its file's window: that cancels,
-- after asking when comments would be lost; "no" puts the tab back.
local function closed_by_person(s)
  local count = s.store:count()
  if count == 0 then
    finish(s, "cancelled")
    return
  end
  s.asking = true
  local choice = vim.fn.confirm(
    ("Cancel the review? Your %d comment%s will not be sent."):format(count, count == 1 and "" or "s"),
    "&Cancel the review\n&Keep reviewing",
    2
  )
  s.asking = false
  if s.ended then
    return
  end
  if choice == 1 then
    finish(s, "cancelled")
  else
    layout.restore(s)
  end
end

local function check(s)
  if s.ended or s.asking or layout.intact(s) then
    return
  end
  closed_by_person(s)
end

local function install_autocmds(s)
  s.group = vim.api.nvim_create_augroup("PiIdeReview", { clear = true })
  vim.api.nvim_create_autocmd("WinClosed", {
    group = s.group,
    callback = function(args)
      local win = tonumber(args.match)
      if win and vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_tabpage(win) == s.tabpage then
        -- After the close, and after whatever closes with it.
        vim.schedule(function()
          check(s)
        end)
      end
    end,
    desc = "pi-ide: closing the review's file cancels it",
  })
  vim.api.nvim_create_autocmd("TabClosed", {
    group = s.group,
    callback = function()
      vim.schedule(function()
        check(s)
      end)
    end,
    desc = "pi-ide: closing the review's tab cancels it",
  })
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = s.group,
    callback = marks.define_highlights,
    desc = "pi-ide: review comment highlights",
  })
end

--- Seam: opens a review tab over `review.files` (relative to
--- `review.root`), beside `review.heads[file]` (lines at git HEAD) where
--- given; raises if it cannot, and then opens nothing.
function M.open(review)
  if current then
    error("a review is already open: finish it first (:PiIde review submit or cancel)", 0)
  end
  local files = checked_files(review)
  local s = { id = review.id, root = review.root, files = files, store = store.new(files), index = 1, ended = false }
  local ok, err = pcall(function()
    marks.define_highlights()
    layout.prepare(s, review.heads)
    layout.open(s)
    install_autocmds(s)
  end)
  if not ok then
    s.ended = true
    pcall(vim.api.nvim_del_augroup_by_id, s.group)
    pcall(layout.close, s)
    error(("cannot open the review: %s"):format(tostring(err)), 0)
  end
  current = s
  util.emit("PiIdeReviewOpened", { files = vim.deepcopy(files) })
  return true
end

--- Seam: the agent that asked for review `id` went away (`reason`): the
--- review closes and nothing is sent.
function M.close(id, reason)
  local s = current
  if not s or s.id ~= id then
    return false
  end
  reason = (reason ~= nil and reason ~= vim.NIL) and tostring(reason) or "the agent went away"
  finish(s, "closed", reason)
  util.notify("review closed: " .. reason, vim.log.levels.WARN)
  return true
end

--- Seam: a review request was refused (another is open, a bad path).
function M.refused(message)
  util.notify(tostring(message), vim.log.levels.WARN)
end

local function no_review()
  util.notify("no review is open", vim.log.levels.WARN)
  return false
end

--- nil, or `{files, comments = {{file, line, end_line, text}, ...}}` for
--- the open review (end_line nil for a comment on one line).
---@return { files: string[], comments: { file: string, line: integer, end_line?: integer, text: string }[] }|nil
function M.status()
  local s = current
  if not s then
    return nil
  end
  local comments = {}
  for _, item in ipairs(s.store:sorted()) do
    comments[#comments + 1] = {
      file = item.file,
      line = item.first,
      end_line = item.last ~= item.first and item.last or nil,
      text = item.c.text,
    }
  end
  return { files = vim.deepcopy(s.files), comments = comments }
end

local function write(s, entry, first, last, text)
  s.store:put(entry.file, entry.buf, first, last, text)
  layout.update_winbars(s)
end

local function entry_of(s, file)
  for _, entry in ipairs(s.entries) do
    if entry.file == file then
      return entry
    end
  end
  return nil
end

--- Comments on lines `line`..`end_line` (1-based; end_line nil for one
--- line) of `file` (as the review names it), as if the person typed it: a
--- comment that covers `line` already is replaced. False with no review.
---@param file string
---@param line integer
---@param end_line? integer
---@param text string
---@return boolean
function M.comment(file, line, end_line, text)
  local s = current
  if not s then
    return no_review()
  end
  local entry = entry_of(s, file)
  if not entry then
    error(("%s is not part of the review"):format(tostring(file)), 2)
  end
  local count = vim.api.nvim_buf_line_count(entry.buf)
  end_line = end_line == vim.NIL and nil or end_line
  local last = end_line or line
  if type(line) ~= "number" or type(last) ~= "number" or line < 1 or last < line or last > count then
    error(("lines %s-%s are not in %s (1-%d)"):format(tostring(line), tostring(last), file, count), 2)
  end
  if type(text) ~= "string" or vim.trim(text) == "" then
    error("a comment needs text", 2)
  end
  write(s, entry, line, last, text)
  return true
end

-- The review file shown in the current buffer, or nil after telling why.
local function file_here(s)
  local entry, _, head = layout.entry_for(s, vim.api.nvim_get_current_buf())
  if not entry then
    util.notify("this buffer is not one of the review's files", vim.log.levels.WARN)
    return nil
  end
  if head then
    util.notify("this is the HEAD version: comment on the working file (right)", vim.log.levels.WARN)
    return nil
  end
  return entry
end

--- `:PiIde comment`, <Plug>(PiIdeComment): comments on lines
--- `first`..`last` (default: the cursor's line, or the comment there,
--- which is then edited) in a floating input.
function M.comment_here(first, last)
  local s = current
  if not s then
    return no_review()
  end
  local entry = file_here(s)
  if not entry then
    return false
  end
  local ranged = first ~= nil
  first = first or vim.fn.line(".")
  last = last or first
  local existing = s.store:at(entry.file, first)
  if existing and not ranged then
    first, last = s.store:lines(existing)
  end
  local lines = first == last and tostring(first) or ("%d-%d"):format(first, last)
  local title = ("%s %s:%s"):format(existing and "Edit the comment on" or "Comment on", entry.file, lines)
  input.open(title, existing and existing.text, function(text)
    if s.ended then
      util.notify("the review has ended: the comment was not kept", vim.log.levels.WARN)
    elseif text == "" then
      util.notify("an empty comment is not kept")
    elseif vim.api.nvim_buf_is_valid(entry.buf) then
      write(s, entry, first, math.min(last, vim.api.nvim_buf_line_count(entry.buf)), text)
    end
  end)
  return true
end

--- <Plug>(PiIdeCommentDelete): deletes the comment on the cursor's line.
function M.delete_comment()
  local s = current
  if not s then
    return no_review()
  end
  local entry = file_here(s)
  local c = entry and s.store:at(entry.file, vim.fn.line("."))
  if not c then
    if entry then
      util.notify("no comment on this line")
    end
    return false
  end
  s.store:remove(c)
  layout.update_winbars(s)
  return true
end

-- Moves to the next (`step` 1) or previous (-1) comment of this file,
-- going round at the end.
local function jump(step)
  local s = current
  if not s then
    return no_review()
  end
  local entry = file_here(s)
  if not entry then
    return false
  end
  local starts = {}
  for _, item in ipairs(s.store:sorted()) do
    if item.file == entry.file then
      starts[#starts + 1] = item.first
    end
  end
  if #starts == 0 then
    util.notify("no comments in this file")
    return false
  end
  local here, target = vim.fn.line("."), nil
  if step > 0 then
    for _, line in ipairs(starts) do
      if line > here then
        target = line
        break
      end
    end
    target = target or starts[1]
  else
    for i = #starts, 1, -1 do
      if starts[i] < here then
        target = starts[i]
        break
      end
    end
    target = target or starts[#starts]
  end
  vim.api.nvim_win_set_cursor(0, { target, 0 })
  return true
end

function M.next_comment()
  return jump(1)
end

function M.prev_comment()
  return jump(-1)
end

local function move_file(step)
  local s = current
  if not s then
    return no_review()
  end
  local n = #s.entries
  layout.show(s, (s.index - 1 + step) % n + 1)
  return true
end

--- Shows the review's next file (after the last: the first).
function M.next_file()
  return move_file(1)
end

--- Shows the review's previous file.
function M.prev_file()
  return move_file(-1)
end

--- Sends the comments to the agent and closes the review.
function M.submit()
  local s = current
  if not s then
    return no_review()
  end
  return finish(s, "submitted")
end

--- Tells the agent the review was cancelled (no comments) and closes it.
function M.cancel()
  local s = current
  if not s then
    return no_review()
  end
  return finish(s, "cancelled")
end

--- One line for :PiIde review status and :PiIde status.
function M.describe()
  local s = current
  if not s then
    return "no review is open"
  end
  local count = s.store:count()
  return ("review of %d file%s, %d comment%s: :PiIde review submit or cancel"):format(
    #s.files,
    #s.files == 1 and "" or "s",
    count,
    count == 1 and "" or "s"
  )
end

return M
