-- How MCP edits see a buffer's text: whether it ends with a newline. (The
-- host reads texts and applies language servers' edits to them itself.)
local M = {}

--- Whether `buf` is written with a final newline.
function M.eol(buf)
  return vim.bo[buf].eol or (vim.bo[buf].fixeol and not vim.bo[buf].binary)
end

return M
