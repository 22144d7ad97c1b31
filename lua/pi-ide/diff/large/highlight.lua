-- The large view's highlight groups. Each starts as a copy of Neovim's diff
-- group (so colour schemes carry over) and fills in the colours that group
-- lacks: the default colour scheme gives DiffChange no cterm colours and
-- DiffDelete no background, which would leave changed lines invisible in a
-- 256-colour terminal. Defined with `default = true`: your own definitions
-- of PiIdeDiff* win. Redefined after every colour scheme change.
local M = {}

M.ADD, M.CHANGE, M.DELETE, M.TEXT, M.FILLER =
  "PiIdeDiffAdd", "PiIdeDiffChange", "PiIdeDiffDelete", "PiIdeDiffText", "PiIdeDiffFiller"

-- Group → {source, cterm {bg, fg} for dark, for light, gui {bg, fg} dark, light}.
local FALLBACK = {
  [M.ADD] = { "DiffAdd", { 22, 255 }, { 194, 232 }, { "#005523", "#eef1f8" }, { "#b3f6c0", "#07080d" } },
  [M.CHANGE] = { "DiffChange", { 239, 254 }, { 252, 232 }, { "#4f5258", "#eef1f8" }, { "#9b9ea4", "#07080d" } },
  [M.DELETE] = { "DiffDelete", { 52, 255 }, { 224, 232 }, { "#590008", "#eef1f8" }, { "#ffc0b9", "#07080d" } },
  [M.TEXT] = { "DiffText", { 24, 255 }, { 153, 232 }, { "#007373", "#eef1f8" }, { "#8cf8f7", "#07080d" } },
}

local function define()
  local light = vim.o.background == "light"
  for name, spec in pairs(FALLBACK) do
    local source = vim.api.nvim_get_hl(0, { name = spec[1], link = false })
    local cterm = light and spec[3] or spec[2]
    local gui = light and spec[5] or spec[4]
    local hl = { default = true, bold = source.bold, cterm = source.cterm }
    if source.ctermbg then
      hl.ctermbg, hl.ctermfg = source.ctermbg, source.ctermfg
    else
      hl.ctermbg, hl.ctermfg, hl.cterm = cterm[1], cterm[2], nil
    end
    if source.bg then
      hl.bg, hl.fg = source.bg, source.fg
    else
      hl.bg, hl.fg, hl.bold = gui[1], gui[2], nil
    end
    vim.api.nvim_set_hl(0, name, hl)
  end
  vim.api.nvim_set_hl(0, M.FILLER, { default = true, link = "DiffDelete" })
end

local defined = false

--- Defines the groups once, and again after each colour scheme change.
function M.setup()
  if defined then
    return
  end
  defined = true
  define()
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = vim.api.nvim_create_augroup("PiIdeDiffHighlights", { clear = true }),
    callback = define,
  })
end

return M
