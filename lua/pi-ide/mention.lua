-- At-mentions for Claude Code: a file, and optionally its lines, that
-- Claude puts into its input box as `@path#L2-4`. Sent to every connected
-- Claude agent; kept until one connects when there is none. pi has no
-- at-mentions: what the person selects reaches it as context anyway.
local util = require("pi-ide.util")

local M = {}

local queue = {} -- mentions waiting for a Claude agent, oldest first

local function send(mention)
  return require("pi-ide.seam").notify("mention", mention)
end

-- The agent terminal, if one runs, comes to the front after a mention.
local function show_agent()
  local ok, agent = pcall(require, "pi-ide.agent")
  if ok and type(agent.show) == "function" then
    pcall(agent.show)
  end
end

local function describe(mention)
  local name = vim.fn.fnamemodify(mention.filePath, ":~:.")
  if mention.lineStart == nil then
    return name
  end
  if mention.lineStart == mention.lineEnd then
    return ("%s#L%d"):format(name, mention.lineStart + 1)
  end
  return ("%s#L%d-%d"):format(name, mention.lineStart + 1, mention.lineEnd + 1)
end

--- Mentions `path`, lines `first`..`last` (1-based, inclusive, as
--- `line(".")` and ex ranges; nil for the whole file). True when it was
--- sent or queued.
function M.mention(path, first, last)
  if type(path) ~= "string" or path == "" then
    util.notify("nothing to mention: no file here", vim.log.levels.WARN)
    return false
  end
  if first and last and last < first then
    first, last = last, first
  end
  local mention = {
    filePath = vim.fn.fnamemodify(path, ":p"),
    lineStart = first and math.max(first - 1, 0) or nil,
    lineEnd = (last or first) and math.max((last or first) - 1, 0) or nil,
  }
  local host = require("pi-ide.host")
  if host.has_client("claude") then
    send(mention)
    show_agent()
    return true
  end
  if host.has_client("pi") then
    util.notify("pi has no at-mentions; what you select already reaches pi as context")
    return false
  end
  queue[#queue + 1] = mention
  util.notify(("%s will be sent when Claude Code connects"):format(describe(mention)))
  return true
end

--- A Claude agent is ready: it gets what was queued.
function M.flush()
  local waiting = queue
  queue = {}
  for _, mention in ipairs(waiting) do
    send(mention)
  end
end

--- The queued mentions as `path#Lx-y` strings, for :PiIde status.
function M.queued()
  return vim.tbl_map(describe, queue)
end

-- The file under the cursor in a file explorer, if the buffer is one.
local function explorer_file()
  local filetype = vim.bo.filetype
  if filetype == "netrw" then
    local dir = vim.b.netrw_curdir
    local name = vim.fn.expand("<cfile>")
    return dir and name ~= "" and (dir .. "/" .. name) or nil
  end
  if filetype == "oil" then
    local ok, oil = pcall(require, "oil")
    local entry = ok and oil.get_cursor_entry() or nil
    return entry and (oil.get_current_dir() .. entry.name) or nil
  end
  if filetype == "NvimTree" then
    local ok, api = pcall(require, "nvim-tree.api")
    local node = ok and api.tree.get_node_under_cursor() or nil
    return node and node.absolute_path or nil
  end
end

--- `:PiIde send` and <Plug>(PiIdeSend): lines `first`..`last` of the
--- current file, or the file under the cursor in netrw, oil or nvim-tree.
function M.send(first, last)
  local file = explorer_file()
  if file then
    return M.mention(file)
  end
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].buftype ~= "" then
    return M.mention(nil)
  end
  return M.mention(vim.api.nvim_buf_get_name(buf), first, last)
end

return M
