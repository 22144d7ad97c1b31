-- The person's keys in a diff tab (option `diff.keymaps`): accept and reject
-- the diff or the hunk under the cursor, in both windows, through the <Plug> maps that plugin/pi-ide.lua defines.
local config = require("pi-ide.config")
local util = require("pi-ide.util")

local M = {}

-- Option key → the <Plug> map it runs.
local plugs = {
  accept = "<Plug>(PiIdeDiffAccept)",
  reject = "<Plug>(PiIdeDiffReject)",
  hunk_accept = "<Plug>(PiIdeHunkAccept)",
  hunk_reject = "<Plug>(PiIdeHunkReject)",
  accept_all = "<Plug>(PiIdeDiffAcceptAll)",
  reject_all = "<Plug>(PiIdeDiffRejectAll)",
}

--- `{accept = lhs?, reject = lhs?, hunk_accept = lhs?, hunk_reject = lhs?,
--- accept_all = lhs?, reject_all = lhs?}`: the keys that are on.
function M.configured()
  return util.keys_on(config.values.diff.keymaps, plugs)
end

--- A winbar of what decides (`decide`, kept in a narrow window) then
--- what it is about (`about`, cut first), each a list of words; with
--- `warning` first, highlighted.
function M.winbar(decide, about, warning)
  local bar = util.escape_statusline(table.concat(decide, " · "))
    .. " · %<"
    .. util.escape_statusline(table.concat(about, " · "))
  if warning then
    bar = "%#WarningMsg#⚠ " .. util.escape_statusline(warning) .. "%* · " .. bar
  end
  return bar
end

--- Maps the keys in both of the diff's buffers.
function M.map(entry)
  for name, lhs in pairs(M.configured()) do
    for _, buf in ipairs({ entry.proposed_buf, entry.original_buf }) do
      vim.keymap.set("n", lhs, plugs[name], { buffer = buf, desc = "pi-ide: " .. name:gsub("_", " ") })
    end
  end
end

return M
