-- The person's keys in a diff tab (option `diff.keymaps`): accept and reject
-- in both windows, through the <Plug> maps that plugin/pi-ide.lua defines.
local config = require("pi-ide.config")

local M = {}

--- `{accept = lhs?, reject = lhs?}`: the keys that are on.
function M.configured()
  local keys = config.values.diff.keymaps
  if type(keys) ~= "table" then
    return {}
  end
  return {
    accept = type(keys.accept) == "string" and keys.accept or nil,
    reject = type(keys.reject) == "string" and keys.reject or nil,
  }
end

--- `lhs` as the person types it: `<leader>aa` becomes `\aa` or `<Space>aa`.
function M.display(lhs)
  local function leader(value)
    return function()
      return vim.fn.keytrans(value or "\\")
    end
  end
  local shown = lhs:gsub("<[lL][eE][aA][dD][eE][rR]>", leader(vim.g.mapleader))
  shown = shown:gsub("<[lL][oO][cC][aA][lL][lL][eE][aA][dD][eE][rR]>", leader(vim.g.maplocalleader))
  return shown
end

--- Maps the keys in both of the diff's buffers.
function M.map(entry)
  local keys = M.configured()
  for _, buf in ipairs({ entry.proposed_buf, entry.original_buf }) do
    if keys.accept then
      vim.keymap.set("n", keys.accept, "<Plug>(PiIdeDiffAccept)", { buffer = buf, desc = "pi-ide: accept" })
    end
    if keys.reject then
      vim.keymap.set("n", keys.reject, "<Plug>(PiIdeDiffReject)", { buffer = buf, desc = "pi-ide: reject" })
    end
  end
end

return M
