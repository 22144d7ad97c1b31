-- Collects vim.diagnostic entries for getDiagnostics. The host shapes them
-- for each client kind.
local M = {}

local function range(d)
  return {
    start = { line = d.lnum, character = d.col },
    ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
  }
end

--- `{ {uri, diagnostics = { {severity, message, source, range} } } }` for
--- one file uri (listed even when clean) or for every buffer with diagnostics.
function M.collect(uri)
  if uri == vim.NIL then
    uri = nil
  end
  local wanted_buf
  if uri then
    local ok, path = pcall(vim.uri_to_fname, uri)
    wanted_buf = ok and require("pi-ide.util").file_buffer(path) or nil
    if not wanted_buf then
      return { { uri = uri, diagnostics = {} } }
    end
  end
  local by_buf, order = {}, {}
  for _, d in ipairs(vim.diagnostic.get(wanted_buf)) do
    if not by_buf[d.bufnr] then
      by_buf[d.bufnr] = {}
      order[#order + 1] = d.bufnr
    end
    table.insert(by_buf[d.bufnr], { severity = d.severity, message = d.message, source = d.source, range = range(d) })
  end
  local files = {}
  for _, buf in ipairs(order) do
    local name = vim.api.nvim_buf_get_name(buf)
    if name ~= "" and vim.bo[buf].buftype == "" then
      files[#files + 1] = { uri = vim.uri_from_fname(name), diagnostics = by_buf[buf] }
    end
  end
  if uri and #files == 0 then
    files[1] = { uri = uri, diagnostics = {} }
  end
  return files
end

return M
