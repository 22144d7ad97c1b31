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

local function changed()
  require("pi-ide.seam").notify("roots_changed")
end

--- Tells the host, which keeps the roots between MCP calls, when they may
--- have changed: the cwd, a language server attaching or leaving, or its
--- workspace folders.
function M.watch(group)
  local autocmd = vim.api.nvim_create_autocmd
  autocmd({ "DirChanged", "LspAttach" }, { group = group, callback = changed, desc = "pi-ide: project roots changed" })
  autocmd("LspDetach", {
    group = group,
    -- The client still counts as attached while its LspDetach runs.
    callback = function()
      vim.schedule(changed)
    end,
    desc = "pi-ide: project roots changed",
  })
  autocmd("LspNotify", {
    group = group,
    callback = function(args)
      if args.data and args.data.method == "workspace/didChangeWorkspaceFolders" then
        changed()
      end
    end,
    desc = "pi-ide: project roots changed",
  })
end

return M
