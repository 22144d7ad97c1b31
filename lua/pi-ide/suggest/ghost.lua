-- Draws a suggestion as ghost text: the first line inline at the cursor, the
-- rest as virtual lines below, with an [i/n] counter when there are several.
local M = {}

local ns = vim.api.nvim_create_namespace("pi-ide-suggest")

vim.api.nvim_set_hl(0, "PiIdeSuggestion", { link = "Comment", default = true })

function M.clear(buf)
  if buf and vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  end
end

--- Shows `text` at (row, col) of `buf` (0-based, byte column).
function M.show(buf, row, col, text, index, total)
  M.clear(buf)
  local lines = vim.split(text, "\n", { plain = true })
  local chunks = {}
  for i, line in ipairs(lines) do
    chunks[i] = { { line, "PiIdeSuggestion" } }
  end
  if total > 1 then
    table.insert(chunks[#chunks], { ("  [%d/%d]"):format(index, total), "PiIdeSuggestion" })
  end
  local virt_lines = #chunks > 1 and vim.list_slice(chunks, 2) or nil
  vim.api.nvim_buf_set_extmark(buf, ns, row, col, {
    virt_text = chunks[1],
    virt_text_pos = "inline",
    virt_lines = virt_lines,
    hl_mode = "combine",
  })
end

return M
