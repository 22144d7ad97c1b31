-- Whether a new diff may take the cursor. Keys typed before the diff
-- appeared must never land in it: while the person is typing (any mode but
-- plain Normal, a half-typed mapping or operator, keys still queued) or is
-- in a terminal, the diff opens in the background.
local config = require("pi-ide.config")

local M = {}

--- True when the person is busy: typing, mid-command or in a terminal.
function M.busy()
  if vim.api.nvim_get_mode().mode ~= "n" then
    return true
  end
  if vim.bo.buftype == "terminal" or vim.fn.state("mo") ~= "" then
    return true
  end
  return vim.fn.getchar(1) ~= 0
end

--- Whether a diff opening now takes the cursor (option `diff.focus`).
function M.take()
  local wanted = config.values.diff.focus
  if wanted == "always" then
    return true
  end
  return wanted == "auto" and not M.busy()
end

return M
