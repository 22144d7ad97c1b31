-- Small helpers shared by the Lua modules.
local M = {}

--- Reports a message to the person, prefixed (and titled, for notifiers
--- that show titles) so they know who speaks.
function M.notify(message, level)
  vim.notify("pi-ide: " .. message, level or vim.log.levels.INFO, { title = "pi-ide" })
end

--- Runs `fn` as the next step of work spread over the main loop, after
--- what is waiting now (keys, calls from the host, redraws). A callback
--- that a scheduled callback schedules runs before those: a chain of steps
--- scheduled so kept Neovim from them for two steps at a time.
function M.next_step(fn)
  vim.schedule(function()
    vim.schedule(fn)
  end)
end

--- Like notify, but while the person types in Insert, Replace or Terminal
--- mode (where the mode message would cover it at once) it waits until
--- they leave it, and is dropped if `still_wanted()` then says so.
function M.notify_when_seen(message, level, still_wanted)
  if not vim.api.nvim_get_mode().mode:match("^[iRt]") then
    return M.notify(message, level)
  end
  vim.api.nvim_create_autocmd("ModeChanged", {
    pattern = "*:n*",
    once = true,
    callback = function()
      if not still_wanted or still_wanted() then
        -- After the mode message is cleared.
        vim.schedule(function()
          M.notify(message, level)
        end)
      end
    end,
    desc = "pi-ide: a message kept until the person stops typing",
  })
end

--- The keys a `keymaps` option turns on: `{name = lhs}` for each name of
--- `plugs` (name → <Plug> map) whose option is a string.
function M.keys_on(keys, plugs)
  local on = {}
  if type(keys) == "table" then
    for name in pairs(plugs) do
      on[name] = type(keys[name]) == "string" and keys[name] or nil
    end
  end
  return on
end

--- `lhs` as the person types it: `<leader>aa` becomes `\aa` or `<Space>aa`.
function M.display_key(lhs)
  local function leader(value)
    return function()
      return vim.fn.keytrans(value or "\\")
    end
  end
  local shown = lhs:gsub("<[lL][eE][aA][dD][eE][rR]>", leader(vim.g.mapleader))
  shown = shown:gsub("<[lL][oO][cC][aA][lL][lL][eE][aA][dD][eE][rR]>", leader(vim.g.maplocalleader))
  return shown
end

--- Fires `User <name>` with `data` for statuslines and user autocmds.
function M.emit(name, data)
  vim.api.nvim_exec_autocmds("User", { pattern = name, data = data, modeline = false })
end

--- `text` shown literally in a statusline or winbar (`%` doubled).
function M.escape_statusline(text)
  return (text:gsub("%%", "%%%%"))
end

--- The loaded buffer whose file is `path`, if any.
function M.file_buffer(path)
  local wanted = vim.fs.normalize(path)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= "" and vim.fs.normalize(name) == wanted then
        return buf
      end
    end
  end
  return nil
end

--- The plugin's root directory (the one holding `lua/` and `Cargo.toml`).
function M.root()
  local source = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(source, ":p:h:h:h")
end

return M
