-- Text the person would lose otherwise (their edits to a proposal the agent
-- took back, an accepted edit that could not be applied) gets a listed
-- scratch buffer of its own, named after the file.
local M = {}

--- A new buffer holding `lines` for `path`, labelled `label`; its number.
function M.buffer(path, lines, label)
  local buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local name = ("pi-ide://%s (%s)"):format(vim.fs.basename(path), label)
  if not pcall(vim.api.nvim_buf_set_name, buf, name) then
    -- A buffer of that name is still there: the number tells them apart.
    pcall(vim.api.nvim_buf_set_name, buf, ("%s #%d"):format(name, buf))
  end
  vim.bo[buf].filetype = vim.filetype.match({ filename = path }) or ""
  return buf
end

return M
