-- Lines of buffers with unsaved edits, which the host needs to complete a
-- language server's answer (line text, columns) where the disk would say
-- something else. The host reads every other file itself, off the UI thread.
local M = {}

--- Seam `modified_buffers`: `{ {buf, path} ... }`, the loaded file buffers
--- with unsaved edits.
function M.modified()
  local found = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified and vim.bo[buf].buftype == "" then
      local path = vim.api.nvim_buf_get_name(buf)
      if path ~= "" then
        found[#found + 1] = { buf = buf, path = path }
      end
    end
  end
  return found
end

--- Seam `buffer_lines`: for each `{buf, rows}` of `wanted` (rows 0-based),
--- the text of those rows ("" past the end, or when the buffer is gone).
function M.rows(wanted)
  local out = {}
  for i, want in ipairs(wanted) do
    local texts = {}
    local loaded = vim.api.nvim_buf_is_valid(want.buf) and vim.api.nvim_buf_is_loaded(want.buf)
    for j, row in ipairs(want.rows) do
      texts[j] = loaded and vim.api.nvim_buf_get_lines(want.buf, row, row + 1, false)[1] or ""
    end
    out[i] = texts
  end
  return out
end

return M
