-- `:PiIde chat …`: the chat's subcommands.
local util = require("pi-ide.util")

local M = {}

local actions = {
  new = function(chat, args)
    chat.open(args[1])
  end,
  pick = function(chat)
    chat.pick()
  end,
  mode = function(chat, args)
    chat.mode(args[1])
  end,
  option = function(chat, args)
    chat.option(args[1], args[2])
  end,
  permission = function(chat, args)
    local choice = args[1] and (tonumber(args[1]) or args[1]) or nil
    chat.permission(choice)
  end,
  cancel = function(chat)
    chat.cancel()
  end,
  close = function(chat)
    chat.close()
  end,
  auth = function(chat, args)
    chat.auth(args[1])
  end,
  resume = function(chat)
    chat.resume()
  end,
  -- The line, range or selection as `@file#L2-4` in the current chat's prompt.
  add = function(chat, _, command)
    local buf = vim.api.nvim_get_current_buf()
    local first, last = vim.fn.line("."), vim.fn.line(".")
    if command and command.range > 0 then
      first, last = command.line1, command.line2
    end
    local mention = require("pi-ide.chat.prompt").mention(buf, first, last)
    local id = chat.show()
    local s = id and chat.prompt_buffer(id)
    if s then
      local lines = vim.api.nvim_buf_get_lines(s, 0, -1, false)
      local last_line = lines[#lines] or ""
      lines[math.max(#lines, 1)] = last_line == "" and mention or (last_line .. " " .. mention)
      vim.api.nvim_buf_set_lines(s, 0, -1, false, lines)
    end
  end,
}

function M.words()
  local words = vim.tbl_keys(actions)
  vim.list_extend(words, require("pi-ide.chat.agents").names())
  table.sort(words)
  return words
end

function M.run(args, command)
  local chat = require("pi-ide.chat")
  local what = args[1]
  if what == nil then
    chat.show()
  elseif actions[what] then
    actions[what](chat, vim.list_slice(args, 2), command)
  elseif require("pi-ide.chat.agents").get(what) then
    chat.open(what)
  else
    util.notify(
      ("unknown chat action or agent %q; try %s"):format(what, table.concat(M.words(), ", ")),
      vim.log.levels.ERROR
    )
  end
end

return M
