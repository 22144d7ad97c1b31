-- The insert-mode suggestion keys (option `suggestion.keymaps`). Each acts
-- only while a suggestion is visible and otherwise does exactly what it did
-- before the plugin mapped it; only `trigger` always asks.
local M = {}

-- Option key (also the `pi-ide.suggest` function it runs) and description.
local ACTIONS = {
  { "accept", "accept suggestion" },
  { "accept_word", "accept suggestion word" },
  { "accept_line", "accept suggestion line" },
  { "next", "next suggestion" },
  { "prev", "previous suggestion" },
  { "dismiss", "dismiss suggestion" },
}

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

-- Maps `lhs` in insert mode: runs `action` (a function name of
-- `pi-ide.suggest`) when `active()` is true, else the previous behaviour.
local function map(lhs, active, action, desc)
  local fallback = keep_previous(lhs)
  local call = ("<Cmd>lua require('pi-ide.suggest').%s()<CR>"):format(action)
  vim.keymap.set("i", lhs, function()
    if active() then
      return call
    end
    return fallback
  end, { expr = true, remap = true, silent = true, desc = "pi-ide: " .. desc })
end

--- Maps the keys of `keys` (the option's table; anything else maps none).
function M.install(keys)
  if type(keys) ~= "table" then
    return
  end
  local suggest = require("pi-ide.suggest")
  for _, action in ipairs(ACTIONS) do
    local lhs = keys[action[1]]
    if type(lhs) == "string" then
      map(lhs, suggest.visible, action[1], action[2])
    end
  end
  if type(keys.trigger) == "string" then
    vim.keymap.set("i", keys.trigger, suggest.trigger, { silent = true, desc = "pi-ide: ask for a suggestion" })
  end
end

return M
