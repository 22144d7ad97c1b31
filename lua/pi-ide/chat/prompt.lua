-- The prompt: the text the person sends, with its mentions turned into
-- ACP content blocks (`@file` a resource link, `@file#L2-4` the lines as
-- an embedded resource, `@diagnostics` the problems of the file you came
-- from), and the prompt buffer's completion (slash commands, files).
local M = {}

local function uri(path)
  return vim.uri_from_fname(path)
end

-- Lines `first`..`last` (1-based) of `path`: its buffer when loaded, else disk.
local function lines_of(path, first, last)
  local buf = require("pi-ide.util").file_buffer(path)
  if buf then
    return vim.api.nvim_buf_get_lines(buf, first - 1, last, false)
  end
  local ok, lines = pcall(vim.fn.readfile, path, "", last)
  return ok and vim.list_slice(lines, first, last) or {}
end

local function diagnostics_text(buf)
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return nil
  end
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    lines[#lines + 1] = ("%s:%d:%d: %s: %s"):format(
      vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":."),
      d.lnum + 1,
      d.col + 1,
      vim.diagnostic.severity[d.severity] or "?",
      d.message
    )
  end
  return table.concat(lines, "\n"), vim.api.nvim_buf_get_name(buf)
end

--- The content blocks of `text`: the text itself, then one block per mention.
---@param text string
--- `opts.embedded`: the agent takes embedded resources; `opts.buf`: where
--- @diagnostics comes from.
---@param opts { embedded?: boolean, buf?: integer }
---@return table[]
function M.blocks(text, opts)
  local blocks = { { type = "text", text = text } }
  local seen = {}
  for mention in text:gmatch("@(%S+)") do
    mention = mention:gsub("[,.;:)%]]+$", "")
    if not seen[mention] then
      seen[mention] = true
      local block
      if mention == "diagnostics" then
        local problems, name = diagnostics_text(opts.buf)
        if problems then
          local resource = { uri = uri(name) .. "#diagnostics", mimeType = "text/plain", text = problems }
          block = opts.embedded and { type = "resource", resource = resource }
            or { type = "text", text = "Diagnostics:\n" .. problems }
        end
      else
        local file, first, last = mention:match("^(.-)#L(%d+)%-?L?(%d*)$")
        file = file or mention
        local path = vim.fn.fnamemodify(file, ":p")
        if vim.fn.filereadable(path) == 1 then
          if first then
            first = tonumber(first)
            last = tonumber(last) or first
            local body = table.concat(lines_of(path, first, last), "\n")
            local ref = ("%s#L%d-%d"):format(uri(path), first, last)
            block = opts.embedded
                and { type = "resource", resource = { uri = ref, text = body, mimeType = "text/plain" } }
              or { type = "text", text = ("%s lines %d-%d:\n```\n%s\n```"):format(file, first, last, body) }
          else
            block = { type = "resource_link", uri = uri(path), name = file }
          end
        end
      end
      blocks[#blocks + 1] = block
    end
  end
  return blocks
end

--- `@file#L2-4` for lines `first`..`last` of buffer `buf`.
function M.mention(buf, first, last)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":.")
  if first == last then
    return ("@%s#L%d"):format(name, first)
  end
  return ("@%s#L%d-%d"):format(name, first, last)
end

--- 'completefunc' of the prompt buffer: slash commands at the start, files after `@`.
---@param commands table[] the agent's commands {name, description}
function M.complete(findstart, base, commands)
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  if findstart == 1 then
    local before = line:sub(1, col)
    local start = before:find("[/@][^%s]*$")
    return start and start - 1 or -3
  end
  local items = {}
  if base:sub(1, 1) == "/" then
    for _, command in ipairs(commands or {}) do
      local word = "/" .. command.name
      if vim.startswith(word, base) then
        items[#items + 1] = { word = word, menu = command.description ~= vim.NIL and command.description or nil }
      end
    end
  elseif base:sub(1, 1) == "@" then
    for _, file in ipairs(vim.fn.getcompletion(base:sub(2), "file")) do
      items[#items + 1] = { word = "@" .. file }
    end
    if vim.startswith("@diagnostics", base) then
      items[#items + 1] = { word = "@diagnostics", menu = "problems of the file you came from" }
    end
  end
  return items
end

return M
