-- Terminals ACP agents create: each command runs in a terminal buffer you
-- can see (a window under the chat when the chat is shown), and the agent
-- reads its output from the buffer: the last `limit` bytes of what the
-- terminal shows.
local seam = require("pi-ide.seam")

local M = {}

---@type table<integer, {buf: integer, job: integer, limit: integer, chat: integer, released?: boolean}>
local terminals = {}

--- Starts `request.argv` in a new terminal buffer; errors when it cannot.
function M.create(request)
  local buf = vim.api.nvim_create_buf(true, false)
  local env = request.env
  if type(env) ~= "table" or vim.tbl_isempty(env) then
    env = nil
  end
  local job
  vim.api.nvim_buf_call(buf, function()
    job = vim.fn.jobstart(request.argv, {
      term = true,
      cwd = request.cwd,
      env = env,
      on_exit = function(_, code)
        local terminal = terminals[request.id]
        local signal = terminal and terminal.killed and "SIGTERM" or nil
        seam.notify("chat_terminal_exit", { id = request.id, exit_code = signal and vim.NIL or code, signal = signal })
      end,
    })
  end)
  if job <= 0 then
    vim.api.nvim_buf_delete(buf, { force = true })
    error(("cannot run %s"):format(tostring(request.argv[1])), 0)
  end
  -- After the start, which names the buffer term://….
  pcall(vim.api.nvim_buf_set_name, buf, ("pi-ide://chat/%d/term-%d"):format(request.chat, request.id))
  terminals[request.id] = { buf = buf, job = job, limit = request.limit, chat = request.chat }
  local chat = package.loaded["pi-ide.chat"]
  if chat then
    chat.show_terminal(request.chat, buf)
  end
end

--- The text terminal `id` shows, its last `limit` bytes.
function M.output(id)
  local terminal = terminals[id]
  if not terminal or not vim.api.nvim_buf_is_valid(terminal.buf) then
    return { output = "", truncated = false }
  end
  local count = vim.api.nvim_buf_line_count(terminal.buf)
  local lines, size, first = {}, 0, count
  -- From the end: an agent's limit bounds the work, not the scrollback.
  while first > 0 and size <= terminal.limit do
    local chunk = vim.api.nvim_buf_get_lines(terminal.buf, math.max(first - 200, 0), first, false)
    for i = #chunk, 1, -1 do
      table.insert(lines, 1, chunk[i])
      size = size + #chunk[i] + 1
    end
    first = math.max(first - 200, 0)
  end
  while #lines > 0 and lines[#lines] == "" do
    lines[#lines] = nil
  end
  -- Neovim's own line under a finished job is no output of the command.
  if #lines > 0 and lines[#lines]:match("^%[Process exited %-?%d+%]$") then
    lines[#lines] = nil
    while #lines > 0 and lines[#lines] == "" do
      lines[#lines] = nil
    end
  end
  local text = table.concat(lines, "\n")
  local truncated = first > 0 or #text > terminal.limit
  if #text > terminal.limit then
    local start = #text - terminal.limit + 1
    -- Not inside a character: skip its continuation bytes.
    while start <= #text and text:byte(start) >= 0x80 and text:byte(start) < 0xC0 do
      start = start + 1
    end
    text = text:sub(start)
  end
  return { output = text, truncated = truncated }
end

--- Stops terminal `id`'s command; `release`: the agent is done with it.
function M.kill(id, release)
  local terminal = terminals[id]
  if not terminal then
    return
  end
  terminal.killed = true
  pcall(vim.fn.jobstop, terminal.job)
  if release then
    terminals[id] = nil
  end
end

return M
