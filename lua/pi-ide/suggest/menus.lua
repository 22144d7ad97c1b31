-- Whether a completion menu is on screen: Neovim's own popup menu, or the
-- floating menu of blink.cmp or nvim-cmp, asked through their public API
-- when they are loaded (never loaded from here). While one is, no ghost
-- text is drawn and nothing is asked.
local M = {}

-- Set by blink.cmp's BlinkCmpMenuOpen / BlinkCmpMenuClose, for versions
-- without is_menu_visible().
local open_by_event = false

local function asks(module, fn)
  local loaded = package.loaded[module]
  if type(loaded) ~= "table" or type(loaded[fn]) ~= "function" then
    return nil
  end
  local ok, visible = pcall(loaded[fn])
  return ok and visible == true
end

--- True while a completion menu shows.
function M.visible()
  if vim.fn.pumvisible() == 1 then
    return true
  end
  local blink = asks("blink.cmp", "is_menu_visible")
  if blink == nil then
    blink = open_by_event
  end
  return blink or asks("cmp", "visible") == true
end

--- User BlinkCmpMenuOpen / BlinkCmpMenuClose.
function M.on_blink(args)
  open_by_event = args.match == "BlinkCmpMenuOpen"
end

local cmp_hooked = false

--- Follows nvim-cmp's menu through its events once it is loaded; calls
--- `on_open` / `on_close` as it opens and closes.
function M.hook_cmp(on_open, on_close)
  local cmp = package.loaded["cmp"]
  if cmp_hooked or type(cmp) ~= "table" or type(cmp.event) ~= "table" or type(cmp.event.on) ~= "function" then
    return
  end
  cmp_hooked = true
  pcall(cmp.event.on, cmp.event, "menu_opened", on_open)
  pcall(cmp.event.on, cmp.event, "menu_closed", on_close)
end

return M
