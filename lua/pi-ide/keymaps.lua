-- Insert-mode keys that act only while a suggestion is visible and
-- otherwise do exactly what they did before the plugin mapped them.
local M = {}

local function fallback_name(lhs)
  return "<Plug>(PiIdeFallback:" .. lhs:gsub("[<>]", "") .. ")"
end

-- Moves the existing insert-mode mapping of `lhs` (if any) to a <Plug>
-- name; without one, the <Plug> name types the key itself.
local function keep_previous(lhs)
  local name = fallback_name(lhs)
  local previous = vim.fn.maparg(lhs, "i", false, true)
  local ours = previous.desc and vim.startswith(previous.desc, "pi-ide")
  if previous.lhs and not ours and previous.buffer ~= 1 then
    previous.lhs = name
    previous.lhsraw = vim.keycode(name)
    previous.lhsrawalt = nil
    if pcall(vim.fn.mapset, "i", false, previous) then
      return name
    end
  end
  if not ours then
    vim.keymap.set("i", name, lhs, { noremap = true, desc = "pi-ide fallback" })
  end
  return name
end

--- Maps `lhs` in insert mode: runs `action` (a function name of
--- `pi-ide.suggest`) when `active()` is true, else the previous behaviour.
function M.map(lhs, active, action, desc)
  local fallback = keep_previous(lhs)
  local call = ("<Cmd>lua require('pi-ide.suggest').%s()<CR>"):format(action)
  vim.keymap.set("i", lhs, function()
    if active() then
      return call
    end
    return fallback
  end, { expr = true, remap = true, silent = true, desc = "pi-ide: " .. desc })
end

--- Maps `lhs` in insert mode to `action` unconditionally.
function M.map_always(lhs, action, desc)
  vim.keymap.set("i", lhs, function()
    require("pi-ide.suggest")[action]()
  end, { silent = true, desc = "pi-ide: " .. desc })
end

return M
