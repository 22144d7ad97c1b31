-- Where this Neovim's project is, for the MCP tools' `projectPath`: the
-- global cwd and the workspace folders of its language servers. Reads only
-- what the LSP clients already hold; no request is made.
local M = {}

--- { cwd, folders? }: folders are absolute paths, each once, omitted when
--- no language server has one.
function M.roots()
  local folders, seen = {}, {}
  local function add(path)
    if type(path) == "string" and path ~= "" and not seen[path] then
      seen[path] = true
      folders[#folders + 1] = path
    end
  end
  for _, client in ipairs(vim.lsp.get_clients()) do
    for _, folder in ipairs(client.workspace_folders or {}) do
      local ok, path = pcall(vim.uri_to_fname, folder.uri)
      if ok then
        add(path)
      end
    end
    if not client.workspace_folders then
      add(client.root_dir)
    end
  end
  return { cwd = vim.fn.getcwd(-1, -1), folders = #folders > 0 and folders or nil }
end

return M
