-- Draws a chat's transcript: Markdown, appended at its end as the agent
-- streams (what is drawn is never drawn again), tool calls as rows updated
-- in place, the plan as a checklist block replaced in place, thoughts as
-- lines that fold. One call draws a whole batch (the host sends at most
-- one a frame).
local M = {}

local ns = vim.api.nvim_create_namespace("pi-ide-chat")

-- Thought lines start with this.
M.THOUGHT = "┆ "

-- The largest transcript tree-sitter highlights (bytes).
M.TREESITTER_MAX_BYTES = 256 * 1024

local STATUS_ICONS = { pending = "○", in_progress = "◐", completed = "●", failed = "✗" }

---@param s pi_ide.ChatSession
local function set_lines(s, first, last, lines)
  local buf = s.buf
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  vim.bo[buf].modifiable = false
end

-- Replaces `count` rows from `row` in place: the mark at their start
-- (left gravity) stays on it, as a line replacement would not keep it.
local function replace_rows(s, row, count, lines)
  local last = row + count - 1
  local end_col = #(vim.api.nvim_buf_get_lines(s.buf, last, last + 1, false)[1] or "")
  vim.bo[s.buf].modifiable = true
  vim.api.nvim_buf_set_text(s.buf, row, 0, last, end_col, lines)
  vim.bo[s.buf].modifiable = false
end

-- Windows showing the transcript whose cursor sits on its last line: they
-- follow the end as it grows.
local function followers(buf)
  local wins = {}
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.api.nvim_win_get_cursor(win)[1] >= last then
      wins[#wins + 1] = win
    end
  end
  return wins
end

-- Text continues the transcript's last line: only the new part is drawn.
local function append(s, text, prefix)
  local buf = s.buf
  local lines = vim.split(text, "\n", { plain = true })
  if prefix then
    for i = 2, #lines do
      lines[i] = prefix .. lines[i]
    end
  end
  local row = vim.api.nvim_buf_line_count(buf) - 1
  local col = #(vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or "")
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_text(buf, row, col, row, col, lines)
  vim.bo[buf].modifiable = false
end

-- Starts a new block (a heading, a row) after what is there.
local function block(s, lines)
  local count = vim.api.nvim_buf_line_count(s.buf)
  local empty = count == 1 and vim.api.nvim_buf_get_lines(s.buf, 0, 1, false)[1] == ""
  if empty then
    set_lines(s, 0, 1, lines)
    return 0
  end
  set_lines(s, count, count, lines)
  return count
end

-- Folds rows `first`..`last` (0-based) in window `win`: thoughts start closed.
local function fold_in(win, first, last)
  vim.api.nvim_win_call(win, function()
    vim.cmd(("silent! %d,%dfold"):format(first + 1, last + 1))
  end)
end

-- A thought block ended: it folds in every window showing the transcript
-- (a manual fold; an expression would be evaluated for every line drawn).
local function close_thought(s)
  local open = s.thought
  if not open then
    return
  end
  s.thought = nil
  local first = vim.api.nvim_buf_get_extmark_by_id(s.buf, ns, open, {})[1]
  local last = vim.api.nvim_buf_line_count(s.buf) - 1
  if not first then
    return
  end
  s.thoughts = s.thoughts or {}
  table.insert(s.thoughts, { mark = open, last = vim.api.nvim_buf_set_extmark(s.buf, ns, last, 0, {}) })
  for _, win in ipairs(vim.fn.win_findbuf(s.buf)) do
    fold_in(win, first, last)
  end
end

--- Folds every thought in `win` (a window that just began to show the transcript).
function M.fold_thoughts(s, win)
  for _, thought in ipairs(s.thoughts or {}) do
    local first = vim.api.nvim_buf_get_extmark_by_id(s.buf, ns, thought.mark, {})[1]
    local last = vim.api.nvim_buf_get_extmark_by_id(s.buf, ns, thought.last, {})[1]
    if first and last then
      fold_in(win, first, last)
    end
  end
end

-- Text of kind `kind` (text, thought, user), continuing a block of that kind.
local function chunk(s, kind, text)
  if text == "" then
    return
  end
  if s.tail ~= kind then
    close_thought(s)
    if kind == "user" then
      block(s, { "", "### You", "" })
    elseif kind == "text" then
      block(s, { "", "### " .. s.agent, "" })
    else
      local row = block(s, { "", M.THOUGHT }) + 1
      s.thought = vim.api.nvim_buf_set_extmark(s.buf, ns, row, 0, { right_gravity = false })
    end
    s.tail = kind
  end
  append(s, text, kind == "thought" and M.THOUGHT or nil)
end

local function relative(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

local function tool_line(tool)
  local places = {}
  for _, at in ipairs(tool.locations or {}) do
    local line = type(at.line) == "number" and (":" .. at.line) or ""
    places[#places + 1] = relative(tostring(at.path)) .. line
  end
  local line = ("- %s **%s** %s"):format(
    STATUS_ICONS[tool.status or "pending"] or "○",
    tool.tool_kind or "tool",
    tostring(tool.title or ""):gsub("\n", " ")
  )
  if #places > 0 then
    line = line .. " · " .. table.concat(places, ", ")
  end
  if tool.status and tool.status ~= "pending" then
    line = line .. " · " .. tool.status
  end
  return line
end

local function tool(s, update, new)
  local known = s.tools[update.id]
  if new or not known then
    known = known or {}
    for key, value in pairs(update) do
      if value ~= vim.NIL then
        known[key] = value
      end
    end
    -- Rows of one run of tool calls stay together, apart from the rest.
    local lines = s.tail ~= "tool" and { "", tool_line(known) } or { tool_line(known) }
    local row = block(s, lines) + #lines - 1
    known.mark = vim.api.nvim_buf_set_extmark(s.buf, ns, row, 0, { right_gravity = false })
    s.tools[update.id] = known
    s.tail = "tool"
    return
  end
  for key, value in pairs(update) do
    if key ~= "kind" and value ~= vim.NIL then
      known[key] = value
    end
  end
  local row = vim.api.nvim_buf_get_extmark_by_id(s.buf, ns, known.mark, {})[1]
  if row then
    replace_rows(s, row, 1, { tool_line(known) })
  end
end

-- Markdown task lists know two states; the one in progress is marked after.
local PLAN_MARKS = { completed = "[x]", in_progress = "[ ]", pending = "[ ]" }

local function plan(s, entries)
  local lines = { "**Plan**" }
  for _, entry in ipairs(entries) do
    local doing = entry.status == "in_progress" and " ◐" or ""
    lines[#lines + 1] = ("- %s %s%s"):format(PLAN_MARKS[entry.status] or "[ ]", entry.content, doing)
  end
  local row = s.plan and vim.api.nvim_buf_get_extmark_by_id(s.buf, ns, s.plan.mark, {})[1]
  if row then
    replace_rows(s, row, s.plan.count, lines)
    s.plan.count = #lines
    return
  end
  row = block(s, vim.list_extend({ "" }, lines)) + 1
  s.plan = { mark = vim.api.nvim_buf_set_extmark(s.buf, ns, row, 0, { right_gravity = false }), count = #lines }
  s.tail = "plan"
end

--- A line for the person (a notice, a question, the end).
function M.note(s, text)
  block(s, { "", "> " .. text:gsub("\n", " ") })
  s.tail = "note"
end

local handlers = {
  text = function(s, u)
    chunk(s, "text", u.text)
  end,
  thought = function(s, u)
    chunk(s, "thought", u.text)
  end,
  user = function(s, u)
    chunk(s, "user", u.text)
  end,
  tool = function(s, u)
    tool(s, u, true)
  end,
  tool_update = function(s, u)
    tool(s, u, false)
  end,
  plan = function(s, u)
    plan(s, u.entries or {})
  end,
  notice = function(s, u)
    M.note(s, (u.level == "error" and "✗ " or u.level == "warn" and "⚠ " or "") .. u.text)
  end,
  permission = function(s, u)
    local names = {}
    for i, option in ipairs(u.options or {}) do
      names[#names + 1] = ("[%d] %s"):format(i, option.name)
    end
    local how = u.review and "review the diff (accept allows, reject rejects)" or table.concat(names, " ")
    M.note(s, ("❓ %s asks: %s — %s"):format(s.agent, u.title ~= vim.NIL and u.title or "permission", how))
  end,
  permission_done = function(s, u)
    M.note(s, "permission: " .. (u.option ~= vim.NIL and u.option or "cancelled"))
  end,
  ended = function(s, u)
    M.note(s, "■ session ended: " .. tostring(u.reason))
  end,
  mode = function(s, u)
    M.note(s, "mode: " .. tostring(u.mode))
  end,
  config = function(s, u)
    local shown = {}
    for _, option in ipairs(type(u.options) == "table" and u.options or {}) do
      shown[#shown + 1] = ("%s = %s"):format(option.name or option.id, tostring(option.currentValue))
    end
    M.note(s, "options: " .. table.concat(shown, ", "))
  end,
  auth = function(s, u)
    local names = {}
    for _, method in ipairs(u.methods or {}) do
      names[#names + 1] = method.name or method.id
    end
    M.note(s, ("%s wants you to sign in (%s): :PiIde chat auth"):format(s.agent, table.concat(names, ", ")))
  end,
}

--- Draws one batch of updates; the windows at the end follow it.
---@param s pi_ide.ChatSession
---@param updates table[]
function M.draw(s, updates)
  local follow = followers(s.buf)
  for _, update in ipairs(updates) do
    local handler = handlers[update.kind]
    if update.kind ~= "thought" and update.kind ~= "text" and update.kind ~= "user" then
      close_thought(s)
    end
    if handler then
      -- One update Lua cannot draw costs that update, not the batch.
      local ok, err = pcall(handler, s, update)
      if not ok then
        pcall(M.note, s, ("⚠ an update of kind %s was not drawn: %s"):format(update.kind, err))
      end
    end
  end
  local last = vim.api.nvim_buf_line_count(s.buf)
  for _, win in ipairs(follow) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

--- The tool call whose row is on `row` (1-based), if any.
function M.tool_at(s, row)
  for _, known in pairs(s.tools) do
    local at = vim.api.nvim_buf_get_extmark_by_id(s.buf, ns, known.mark, {})[1]
    if at and at + 1 == row then
      return known
    end
  end
end

--- Sets up a transcript buffer, highlighted as Markdown.
function M.setup_buffer(buf)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "pi-ide-chat"
  pcall(vim.treesitter.language.register, "markdown", "pi-ide-chat")
  M.streaming(buf, false)
end

--- While an answer streams, the transcript is highlighted by Vim's regex
--- syntax, which looks only at the lines on screen; in between, by
--- tree-sitter. Tree-sitter re-checks its Markdown trees (one per
--- paragraph's inline text) at every edit: 300 ms a frame for a 40 KB
--- answer in a long transcript.
---@param buf integer
---@param streaming boolean
function M.streaming(buf, streaming)
  local size = vim.api.nvim_buf_get_offset(buf, vim.api.nvim_buf_line_count(buf))
  -- Above this, tree-sitter's first parse of the whole transcript (one
  -- tree per paragraph) freezes Neovim for seconds: 1.9 s at 1 MB.
  if streaming or size > M.TREESITTER_MAX_BYTES then
    pcall(vim.treesitter.stop, buf)
    vim.bo[buf].syntax = "markdown"
  elseif not pcall(vim.treesitter.start, buf, "markdown") then
    vim.bo[buf].syntax = "markdown"
  end
end

--- Window options of a window showing a transcript.
function M.setup_window(win)
  local wo = vim.wo[win][0]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.foldmethod = "manual"
  wo.foldlevel = 0
  wo.foldenable = true
  -- A one-line thought folds too.
  wo.foldminlines = 0
  wo.conceallevel = 2
end

return M
