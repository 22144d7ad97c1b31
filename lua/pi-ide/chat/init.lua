-- The chat with ACP agents (`:PiIde chat`): a transcript buffer and a
-- prompt buffer per session. The host speaks the protocol and batches
-- what the agent streams; this module keeps the sessions, renders their
-- updates (chat/render.lua) and sends what the person types.
local agents = require("pi-ide.chat.agents")
local render = require("pi-ide.chat.render")
local seam = require("pi-ide.seam")
local util = require("pi-ide.util")

local M = {}

---@class pi_ide.ChatSession
---@field id integer
---@field agent string
---@field status string starting | ready | working | idle | ended
---@field title string?
---@field buf integer the transcript
---@field prompt_buf integer
---@field session_id string? the agent's id of the session
---@field modes table? `{currentModeId, availableModes}`
---@field config_options table?
---@field commands table[] the agent's slash commands
---@field embedded boolean the agent takes embedded resources
---@field load_session boolean the agent can resume sessions
---@field auth_methods table[]
---@field permissions table[] requests waiting for the person, oldest first
---@field tools table<string, table>
---@field tail string? the kind of the transcript's last block
---@field plan table?
---@field reason string? why it ended
---@field origin integer? the buffer the person came from (for @diagnostics)

---@class pi_ide.ChatInfo
---@field id integer
---@field agent string
---@field status string
---@field title string?

---@type table<integer, pi_ide.ChatSession>
local sessions = {}
local order = {}
local current
local next_id = 0
local statusline = ""

local function refresh_statusline()
  local s = sessions[current]
  if not s then
    statusline = ""
    return
  end
  local waiting = #s.permissions > 0 and " · permission?" or ""
  local mode = s.modes and s.modes.currentModeId
  statusline = ("%s: %s%s%s"):format(s.agent, s.status, mode and mode ~= vim.NIL and (" · " .. mode) or "", waiting)
end

-- Highlighting for streaming (regex syntax) or at rest (tree-sitter).
local function set_streaming(s, streaming)
  if s.streaming ~= streaming then
    s.streaming = streaming
    render.streaming(s.buf, streaming)
  end
end

local function info(s)
  return { id = s.id, agent = s.agent, status = s.status, title = s.title }
end

---@return pi_ide.ChatSession?
local function session(id)
  return sessions[id or current]
end

-- The transcript on top, the prompt below it, on the right.
local function show(s, enter)
  local prompt_win = vim.fn.bufwinid(s.prompt_buf)
  if prompt_win ~= -1 then
    if enter then
      vim.api.nvim_set_current_win(prompt_win)
    end
    return
  end
  local origin = vim.api.nvim_get_current_win()
  local win = vim.fn.bufwinid(s.buf)
  if win == -1 then
    vim.cmd("botright vsplit")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_width(win, math.max(math.floor(vim.o.columns * 0.4), 40))
    vim.api.nvim_win_set_buf(win, s.buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  render.setup_window(win)
  render.fold_thoughts(s, win)
  vim.cmd("belowright 6split")
  local pwin = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(pwin, s.prompt_buf)
  vim.wo[pwin].winfixheight = true
  vim.wo[pwin].number = false
  vim.wo[pwin].relativenumber = false
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(s.buf), 0 })
  if not enter and vim.api.nvim_win_is_valid(origin) then
    vim.api.nvim_set_current_win(origin)
  end
end

local function keymaps(s)
  local function map(modes, lhs, rhs, desc)
    vim.keymap.set(modes, lhs, rhs, { buffer = s.prompt_buf, desc = desc, nowait = true })
  end
  local function send()
    local text = table.concat(vim.api.nvim_buf_get_lines(s.prompt_buf, 0, -1, false), "\n")
    if vim.trim(text) == "" then
      return
    end
    if M.send(text, { id = s.id }) then
      vim.api.nvim_buf_set_lines(s.prompt_buf, 0, -1, false, {})
    end
  end
  map("n", "<CR>", send, "pi-ide: send the prompt")
  map({ "n", "i" }, "<C-s>", function()
    vim.cmd("stopinsert")
    send()
  end, "pi-ide: send the prompt")
  for _, buf in ipairs({ s.prompt_buf, s.buf }) do
    vim.keymap.set({ "n", "i" }, "<C-c>", function()
      M.cancel(s.id)
    end, { buffer = buf, desc = "pi-ide: cancel the agent's turn" })
  end
  local function jump()
    local tool = render.tool_at(s, vim.api.nvim_win_get_cursor(0)[1])
    local at = tool and tool.locations and tool.locations[1]
    if not at then
      return false
    end
    M.jump(at)
    return true
  end
  for _, lhs in ipairs({ "<CR>", "gf" }) do
    vim.keymap.set("n", lhs, function()
      if not jump() then
        vim.cmd("normal! " .. (lhs == "gf" and "gf" or "\r"))
      end
    end, { buffer = s.buf, desc = "pi-ide: go to the tool call's location" })
  end
  vim.bo[s.prompt_buf].completefunc = "v:lua.require'pi-ide.chat'.complete"
end

--- Opens a location a tool call names in the window you came from.
function M.jump(at)
  local target
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.bo[buf].buftype == "" then
      target = win
      break
    end
  end
  if target then
    vim.api.nvim_set_current_win(target)
  else
    vim.cmd("topleft vsplit")
  end
  vim.cmd("edit " .. vim.fn.fnameescape(at.path))
  if type(at.line) == "number" then
    pcall(vim.api.nvim_win_set_cursor, 0, { at.line, 0 })
  end
end

--- Completion in the prompt buffer (slash commands, `@` files).
function M.complete(findstart, base)
  local s = sessions[current]
  for _, known in pairs(sessions) do
    if known.prompt_buf == vim.api.nvim_get_current_buf() then
      s = known
    end
  end
  return require("pi-ide.chat.prompt").complete(findstart, base, s and s.commands or {})
end

local function start(s, agent, load)
  local ok, hint = agents.installed(agent)
  if not ok then
    util.notify(hint, vim.log.levels.ERROR)
    render.note(s, "■ " .. hint)
    s.status, s.reason = "ended", hint
    return
  end
  s.status = "starting"
  local cwd = vim.fn.getcwd(-1, -1)
  if require("pi-ide.config").values.agent.baseline then
    -- What the agent writes itself shows in `:PiIde changes`; a baseline
    -- with changes not reviewed yet (another agent's) stays.
    require("pi-ide.changes").start({ root = cwd, keep = true, quiet = true })
  end
  seam.notify("chat", {
    op = "open",
    chat = s.id,
    agent = agent.name,
    cmd = agent.cmd,
    env = agent.env,
    cwd = cwd,
    load = load,
  })
end

--- Opens a new chat with `agent` (default: option `acp.default`), shows it
--- and enters its prompt.
---@param agent? string
---@param opts? { load?: string, enter?: boolean } load: the agent's session id to resume
---@return integer? id
function M.open(agent, opts)
  opts = opts or {}
  local name = agent or require("pi-ide.config").values.acp.default
  local spec = agents.get(name)
  if not spec then
    util.notify(("unknown agent %q; try %s"):format(name, table.concat(agents.names(), ", ")), vim.log.levels.ERROR)
    return nil
  end
  if not require("pi-ide.host").channel() then
    util.notify("the host is not running (:PiIde start)", vim.log.levels.ERROR)
    return nil
  end
  next_id = next_id + 1
  local id = next_id
  local s = {
    id = id,
    agent = name,
    status = "starting",
    commands = {},
    permissions = {},
    tools = {},
    embedded = false,
    load_session = false,
    auth_methods = {},
    origin = vim.api.nvim_get_current_buf(),
  }
  s.buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(s.buf, ("pi-ide://chat/%s#%d"):format(name, id))
  render.setup_buffer(s.buf)
  s.streaming = false
  s.prompt_buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(s.prompt_buf, ("pi-ide://chat/%s#%d/prompt"):format(name, id))
  vim.bo[s.prompt_buf].filetype = "pi-ide-chat-prompt"
  vim.bo[s.prompt_buf].bufhidden = "hide"
  vim.b[s.buf].pi_ide_chat = id
  vim.b[s.prompt_buf].pi_ide_chat = id
  sessions[id] = s
  order[#order + 1] = id
  current = id
  keymaps(s)
  start(s, spec, opts.load)
  if opts.enter ~= false then
    show(s, true)
  end
  refresh_statusline()
  return id
end

--- Sends a prompt to chat `opts.id` (default: the current one), the same
--- as the prompt buffer: mentions (`@file`, `@file#L2-4`, `@diagnostics`)
--- become resources. False when it was not sent.
---@param text string
---@param opts? { id?: integer }
---@return boolean
function M.send(text, opts)
  local s = session(opts and opts.id)
  if not s then
    util.notify("no chat: :PiIde chat", vim.log.levels.WARN)
    return false
  end
  if s.status == "ended" then
    util.notify(("the chat with %s has ended: %s"):format(s.agent, s.reason or "?"), vim.log.levels.WARN)
    return false
  end
  if s.status == "working" then
    util.notify(("%s is still answering; <C-c> cancels"):format(s.agent), vim.log.levels.WARN)
    return false
  end
  local blocks = require("pi-ide.chat.prompt").blocks(text, { embedded = s.embedded, buf = s.origin })
  set_streaming(s, true)
  render.draw(s, { { kind = "user", text = text } })
  s.tail = nil
  s.status = "working"
  refresh_statusline()
  return seam.notify("chat", { op = "prompt", chat = s.id, prompt = blocks }) ~= false
end

--- Cancels the agent's turn in chat `id` (default: the current one).
---@param id? integer
function M.cancel(id)
  local s = session(id)
  if not s then
    return
  end
  for _ = 1, #s.permissions do
    table.remove(s.permissions, 1)
  end
  seam.notify("chat", { op = "cancel", chat = s.id })
end

--- Stops chat `id`'s agent; its transcript stays.
---@param id? integer
function M.close(id)
  local s = session(id)
  if s then
    seam.notify("chat", { op = "close", chat = s.id })
  end
end

--- Every chat, oldest first.
---@return pi_ide.ChatInfo[]
function M.sessions()
  local list = {}
  for _, id in ipairs(order) do
    list[#list + 1] = info(sessions[id])
  end
  return list
end

--- The transcript of chat `id` (default: the current one), as drawn.
---@param id? integer
---@return string[]
function M.transcript(id)
  local s = session(id)
  if not s or not vim.api.nvim_buf_is_valid(s.buf) then
    return {}
  end
  return vim.api.nvim_buf_get_lines(s.buf, 0, -1, false)
end

local function answer(s, request, option)
  for i, waiting in ipairs(s.permissions) do
    if waiting == request then
      table.remove(s.permissions, i)
    end
  end
  seam.notify("chat_permission", { id = request.id, option = option })
  refresh_statusline()
end

--- Answers the oldest open permission request: `choice` is an option id,
--- its number in the list (1-based), its kind (`allow_once`, …), or false
--- to dismiss it (cancelled); nil asks with `vim.ui.select`.
---@param choice? string|integer|false
---@param id? integer the chat (default: the first with a question)
function M.permission(choice, id)
  local s = session(id)
  if not s or #s.permissions == 0 then
    for _, other in ipairs(order) do
      if #sessions[other].permissions > 0 then
        s = sessions[other]
        break
      end
    end
  end
  local request = s and s.permissions[1]
  if not request then
    util.notify("no agent is asking for permission")
    return
  end
  if choice == false then
    answer(s, request, nil)
    return
  end
  if choice ~= nil then
    for i, option in ipairs(request.options) do
      if option.optionId == choice or option.kind == choice or i == choice then
        answer(s, request, option.optionId)
        return
      end
    end
    util.notify(("no option %s"):format(tostring(choice)), vim.log.levels.ERROR)
    return
  end
  local title = request.tool_call.title ~= vim.NIL and request.tool_call.title or "permission"
  vim.ui.select(request.options, {
    prompt = ("%s asks: %s"):format(s.agent, title),
    format_item = function(option)
      return option.name
    end,
  }, function(option)
    if option then
      answer(s, request, option.optionId)
    end
  end)
end

--- Picks a mode for chat `id` (or sets `mode`).
function M.mode(mode, id)
  local s = session(id)
  if not s or not s.modes or s.modes == vim.NIL then
    util.notify("this agent offers no modes")
    return
  end
  if mode then
    seam.notify("chat", { op = "mode", chat = s.id, mode = mode })
    return
  end
  vim.ui.select(s.modes.availableModes or {}, {
    prompt = s.agent .. " mode",
    format_item = function(m)
      return m.name .. (m.id == s.modes.currentModeId and " (current)" or "")
    end,
  }, function(m)
    if m then
      seam.notify("chat", { op = "mode", chat = s.id, mode = m.id })
    end
  end)
end

--- Sets one of the agent's session options (`session/set_config_option`):
--- `option` and `value` by id, or picked with `vim.ui.select`.
---@param option? string
---@param value? string
---@param id? integer
function M.option(option, value, id)
  local s = session(id)
  local options = s and type(s.config_options) == "table" and s.config_options or {}
  if #options == 0 then
    util.notify("this agent offers no session options")
    return
  end
  local function set(chosen, to)
    seam.notify("chat", { op = "config", chat = s.id, option = chosen, value = to })
  end
  if option and value then
    set(option, value)
    return
  end
  vim.ui.select(options, {
    prompt = s.agent .. " option",
    format_item = function(o)
      return ("%s (%s)"):format(o.name or o.id, tostring(o.currentValue))
    end,
  }, function(o)
    if not o then
      return
    end
    vim.ui.select(type(o.options) == "table" and o.options or {}, {
      prompt = o.name or o.id,
      format_item = function(v)
        return v.name or tostring(v.value)
      end,
    }, function(v)
      if v then
        set(o.id, v.value)
      end
    end)
  end)
end

--- Signs in with one of the agent's methods.
function M.auth(method, id)
  local s = session(id)
  if not s or #s.auth_methods == 0 then
    util.notify("this agent asks for no sign-in")
    return
  end
  if method then
    seam.notify("chat", { op = "auth", chat = s.id, method = method })
    return
  end
  vim.ui.select(s.auth_methods, {
    prompt = s.agent .. ": sign in with",
    format_item = function(m)
      return m.name or m.id
    end,
  }, function(m)
    if m then
      seam.notify("chat", { op = "auth", chat = s.id, method = m.id })
    end
  end)
end

--- Shows chat `id` (default: the current one, else a new one) and enters its prompt.
function M.show(id)
  local s = session(id)
  if not s then
    return M.open()
  end
  current = s.id
  show(s, true)
  refresh_statusline()
  return s.id
end

--- The prompt buffer of chat `id`.
---@param id integer
---@return integer?
function M.prompt_buffer(id)
  local s = sessions[id]
  return s and s.prompt_buf
end

--- Picks a chat with `vim.ui.select` and shows it.
function M.pick()
  local list = M.sessions()
  if #list == 0 then
    util.notify("no chat: :PiIde chat")
    return
  end
  vim.ui.select(list, {
    prompt = "chat",
    format_item = function(item)
      return ("#%d %s (%s)%s"):format(item.id, item.agent, item.status, item.title and (": " .. item.title) or "")
    end,
  }, function(item)
    if item then
      M.show(item.id)
    end
  end)
end

--- Starts chat `id`'s agent again on the session it had, where the agent can resume one.
function M.resume(id)
  local s = session(id)
  if not s or not s.session_id or not s.load_session then
    util.notify("this chat cannot be resumed (the agent offers no session/load)", vim.log.levels.WARN)
    return
  end
  s.status, s.tail, s.reason = "starting", nil, nil
  start(s, agents.get(s.agent), s.session_id)
end

--- `gemini: working · default` for statuslines ("" without a chat); a table lookup.
---@return string
function M.statusline()
  return statusline
end

-- Updates the host sends for one session: what only Lua keeps.
local function remember(s, update)
  local kind = update.kind
  if kind == "status" then
    s.status = update.status
  elseif kind == "agent" then
    s.embedded = type(update.prompt) == "table" and update.prompt.embeddedContext == true
    s.load_session = update.load_session == true
    s.auth_methods = type(update.auth_methods) == "table" and update.auth_methods or {}
  elseif kind == "session" then
    s.session_id = update.session_id
    s.modes = update.modes ~= vim.NIL and update.modes or nil
    s.config_options = update.config_options
  elseif kind == "commands" then
    s.commands = update.commands or {}
  elseif kind == "mode" and s.modes then
    s.modes.currentModeId = update.mode
  elseif kind == "config" then
    s.config_options = update.options
  elseif kind == "title" and update.title ~= vim.NIL then
    s.title = update.title
  elseif kind == "ended" then
    s.status, s.reason = "ended", update.reason
    s.permissions = {}
  end
end

--- Seam: a batch of updates of chat `id`.
function M.on_update(id, updates)
  local s = sessions[id]
  if not s then
    return
  end
  local ended
  for _, update in ipairs(updates) do
    remember(s, update)
    ended = ended or (update.kind == "ended" and update.reason)
  end
  render.draw(s, updates)
  -- After drawing: the batch's text went in under the cheaper highlighting.
  set_streaming(s, s.status == "working" or s.status == "starting")
  refresh_statusline()
  util.emit("PiIdeChatUpdate", info(s))
  if ended then
    util.emit("PiIdeChatEnded", { id = s.id, agent = s.agent, reason = ended })
  end
end

--- Seam: an agent asks permission.
function M.on_permission(request)
  local s = sessions[request.chat]
  if not s then
    seam.notify("chat_permission", { id = request.id })
    return
  end
  request.options = type(request.options) == "table" and request.options or {}
  s.permissions[#s.permissions + 1] = request
  local title = request.tool_call.title ~= vim.NIL and request.tool_call.title or "permission"
  render.draw(s, { { kind = "permission", title = title, options = request.options } })
  refresh_statusline()
  util.emit("PiIdeChatPermission", { id = s.id, agent = s.agent, title = title, options = request.options })
  local buf = vim.api.nvim_get_current_buf()
  local idle = vim.api.nvim_get_mode().mode == "n"
  if idle and (buf == s.buf or buf == s.prompt_buf) then
    vim.schedule(function()
      M.permission(nil, s.id)
    end)
  else
    util.notify(("%s asks: %s (:PiIde chat permission)"):format(s.agent, title))
  end
end

--- Shows an agent's terminal under its chat, without moving the cursor.
function M.show_terminal(id, buf)
  local s = sessions[id]
  local win = s and vim.fn.bufwinid(s.buf) or -1
  if win == -1 then
    return
  end
  local height = math.max(math.floor(vim.api.nvim_win_get_height(win) / 3), 5)
  vim.api.nvim_open_win(buf, false, { split = "below", win = win, height = height })
end

return M
