-- The person's keys in a diff tab (option `diff.keymaps`): accept in the
-- proposal, reject in both windows, through the <Plug> maps that
-- plugin/pi-ide.lua defines.
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

--- Maps the keys in the diff's two buffers.
function M.map(entry)
  local keys = M.configured()
  if keys.accept then
    vim.keymap.set(
      "n",
      keys.accept,
      "<Plug>(PiIdeDiffAccept)",
      { buffer = entry.proposed_buf, desc = "pi-ide: accept" }
    )
  end
  if keys.reject then
    for _, buf in ipairs({ entry.proposed_buf, entry.original_buf }) do
      vim.keymap.set("n", keys.reject, "<Plug>(PiIdeDiffReject)", { buffer = buf, desc = "pi-ide: reject" })
    end
  end
end

return M
