-- Your own MCP tools, served at the /mcp endpoint next to the built-in
-- ones: `register_tool` adds one from a Neovim config; its handler runs on
-- the UI thread with the arguments and a callback for the result. A tool
-- that changes files proposes the change with `propose_edit`, which goes
-- through the same review as every MCP edit.
local M = {}

---@alias pi-ide.mcp.Result string|table Text, or a table given as structuredContent (and as JSON text).

---@class pi-ide.mcp.Tool
---@field name string Letters, digits, `_`, `-`, `.`; not a built-in tool's name.
---@field description string What the tool does, for the agent.
--- JSON Schema of the arguments: `type = "object"`; `properties`, if
--- given, maps names to schema tables; `required`, if given, lists names
--- of `properties`. Default: no arguments. `projectPath` is added.
---@field input_schema? table
--- Runs on the UI thread with the call's arguments (`projectPath`, when
--- the client gave one, checked to lie in the project); call `done` once,
--- now or later. An error raised, or `done(nil, err)`, is an isError result.
---@field handler fun(args: table, done: fun(result?: pi-ide.mcp.Result, err?: string))

---@class pi-ide.mcp.Edit
---@field path string Absolute, or relative to Neovim's cwd; inside the project.
---@field text string The file's whole new text.

---@class pi-ide.mcp.EditResult
---@field ok boolean Every file was applied (accepted, or approval is off).
---@field message string What happened, as the agent is told.
---@field applied? string[] Files applied, relative to the project.

-- name -> tool, and the order they were registered in.
local tools, order = {}, {}
-- Calls waiting for the host: propose_edit id -> callback.
local waiting, next_id = {}, 0

local function specs()
  local list = {}
  for _, name in ipairs(order) do
    local tool = tools[name]
    list[#list + 1] = { name = name, description = tool.description, input_schema = tool.input_schema }
  end
  return list
end

--- Tells the host the tools registered now (also after it restarts).
function M.announce()
  require("pi-ide.seam").notify("tools_changed", specs())
end

local function check(tool)
  if type(tool) ~= "table" then
    return "register_tool takes a table {name, description, input_schema, handler}"
  end
  if type(tool.name) ~= "string" or not tool.name:match("^[%w_.-]+$") or #tool.name > 128 then
    return ("tool name %s must be letters, digits, `_`, `-` or `.`"):format(vim.inspect(tool.name))
  end
  if type(tool.description) ~= "string" or tool.description == "" then
    return ("tool %s needs a description"):format(tool.name)
  end
  if type(tool.handler) ~= "function" then
    return ("tool %s needs a handler function"):format(tool.name)
  end
  local problem = require("pi-ide.mcp.schema").problem(tool.input_schema)
  if problem then
    return ("tool %s: %s"):format(tool.name, problem)
  end
end

--- Adds (or replaces) an MCP tool; connected clients are told the list
--- changed. A tool that is not as `pi-ide.mcp.Tool` says raises an error
--- naming the field.
---@param tool pi-ide.mcp.Tool
---@return true
function M.register_tool(tool)
  local problem = check(tool)
  if problem then
    error("pi-ide.mcp.register_tool: " .. problem, 2)
  end
  if not tools[tool.name] then
    order[#order + 1] = tool.name
  end
  tools[tool.name] = {
    description = tool.description,
    -- A copy: the schema served stays the one checked. The host gives
    -- empty tables the shape JSON Schema needs.
    input_schema = tool.input_schema and vim.deepcopy(tool.input_schema) or { type = "object" },
    handler = tool.handler,
  }
  M.announce()
  return true
end

--- Removes a tool registered before; true when there was one.
---@param name string
---@return boolean
function M.unregister_tool(name)
  if not tools[name] then
    return false
  end
  tools[name] = nil
  order = vim.tbl_filter(function(n)
    return n ~= name
  end, order)
  M.announce()
  return true
end

--- The names of the registered tools, in order.
---@return string[]
function M.tools()
  return vim.deepcopy(order)
end

local function answer(id, payload)
  payload.id = id
  require("pi-ide.seam").notify("tool_answer", payload)
end

--- The result a handler gave, as the host takes it (the host makes a
--- table its JSON text and structuredContent).
local function shaped(result)
  if type(result) == "table" then
    return { table = result }
  end
  return { text = result == nil and "" or tostring(result) }
end

--- Seam `user_tool`: runs the handler of `call.name` with `call.arguments`;
--- its result goes back as `tool_answer` `call.id`.
function M.call(call)
  local tool = tools[call.name]
  if not tool then
    return answer(call.id, { error = ("no tool %s is registered"):format(call.name) })
  end
  local answered = false
  local function done(result, err)
    if answered then
      return
    end
    answered = true
    if err ~= nil then
      return answer(call.id, { error = tostring(err) })
    end
    answer(call.id, { result = shaped(result) })
  end
  -- After this seam call returns: the host never waits on the handler.
  vim.schedule(function()
    -- Arguments the host sent as an object stay one when given back.
    local args = type(call.arguments) == "table" and call.arguments or vim.empty_dict()
    local ok, err = pcall(tool.handler, args, done)
    if not ok then
      done(nil, ("%s failed: %s"):format(call.name, tostring(err)))
    end
  end)
end

--- Proposes new text for files through the person's review (one diff per
--- file, as for every MCP edit); `callback(result)` once they decided.
--- `edit` is one file `{path, text}` or `{files = {...}, title?}`.
---@param edit pi-ide.mcp.Edit|{ files: pi-ide.mcp.Edit[], title?: string }
---@param callback? fun(result: pi-ide.mcp.EditResult)
---@return boolean sent False when the host is not running.
function M.propose_edit(edit, callback)
  local files = {}
  for _, file in ipairs(edit.files or { { path = edit.path, text = edit.text } }) do
    if type(file.path) ~= "string" or type(file.text) ~= "string" then
      error("pi-ide: propose_edit needs {path, text} for every file", 2)
    end
    files[#files + 1] = { path = vim.fn.fnamemodify(file.path, ":p"), text = file.text }
  end
  if #files == 0 then
    error("pi-ide: propose_edit needs at least one file", 2)
  end
  next_id = next_id + 1
  local id = next_id
  waiting[id] = callback or function() end
  local sent = require("pi-ide.seam").notify("propose_edit", { id = id, title = edit.title, files = files })
  if not sent then
    waiting[id] = nil
  end
  return sent
end

--- Seam `edit_decided`: what became of propose_edit `id`.
function M.decided(id, result)
  local callback = waiting[id]
  waiting[id] = nil
  if not callback then
    return
  end
  local structured = type(result.structured) == "table" and result.structured or {}
  callback({ ok = result.ok == true, message = result.text or "", applied = structured.applied })
end

return M
