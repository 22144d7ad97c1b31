-- A review's comments: where each is (its extmark follows edits of the
-- file), its text, and the lines around it as they were when it was
-- written, which is what the agent gets.
local marks = require("pi-ide.review.marks")

local M = {}

local Store = {}
Store.__index = Store

-- Lines shown around the commented lines in a comment's context.
local AROUND = 3

--- A store for the files `files` (relative paths, in review order).
function M.new(files)
  local order = {}
  for i, file in ipairs(files) do
    order[file] = i
  end
  return setmetatable({ comments = {}, order = order }, Store)
end

--- `"<n>: <text>"` for the lines around `first`..`last` of `buf`, with
--- `"> "` before the commented ones.
function M.context(buf, first, last)
  local count = vim.api.nvim_buf_line_count(buf)
  local from, to = math.max(1, first - AROUND), math.min(count, last + AROUND)
  local lines = vim.api.nvim_buf_get_lines(buf, from - 1, to, false)
  local context = {}
  for i, text in ipairs(lines) do
    local n = from + i - 1
    context[i] = ((n >= first and n <= last) and "> " or "") .. ("%d: %s"):format(n, text)
  end
  return context
end

--- Lines `first, last` of comment `c` now.
function Store.lines(_, c)
  local first, last = marks.position(c)
  if first then
    c.first, c.last = first, last
  end
  return c.first, c.last
end

--- The comment of `file` whose lines include `line`, if any.
function Store:at(file, line)
  for _, c in ipairs(self.comments) do
    if c.file == file then
      local first, last = self:lines(c)
      if line >= first and line <= last then
        return c
      end
    end
  end
  return nil
end

--- Writes a comment on lines `first`..`last` of `file` (shown in `buf`):
--- a new one, or the one that already covers `first`, which then takes
--- these lines and text. Its context is taken now.
function Store:put(file, buf, first, last, text)
  local c = self:at(file, first)
  if not c then
    c = { file = file }
    self.comments[#self.comments + 1] = c
  end
  c.buf, c.first, c.last, c.text = buf, first, last, text
  c.context = M.context(buf, first, last)
  marks.draw(c, first, last)
  return c
end

function Store:remove(c)
  marks.erase(c)
  for i, other in ipairs(self.comments) do
    if other == c then
      table.remove(self.comments, i)
      return
    end
  end
end

--- Every comment, in file order then by line: `{c, file, first, last}`.
function Store:sorted()
  local list = {}
  for _, c in ipairs(self.comments) do
    local first, last = self:lines(c)
    list[#list + 1] = { c = c, file = c.file, first = first, last = last }
  end
  table.sort(list, function(a, b)
    if a.file ~= b.file then
      return (self.order[a.file] or 0) < (self.order[b.file] or 0)
    end
    return a.first < b.first
  end)
  return list
end

function Store:count()
  return #self.comments
end

--- Removes every comment's marks.
function Store:erase_all()
  for _, c in ipairs(self.comments) do
    marks.erase(c)
  end
end

return M
