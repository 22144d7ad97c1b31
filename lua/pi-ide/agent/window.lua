-- Where an agent's terminal shows in Neovim: a split on one side or a
-- float (option `agent.position`, `agent.size`).
local config = require("pi-ide.config")

local M = {}

local SPLITS = { right = "right", left = "left", bottom = "below", top = "above" }

-- `size` of `total` cells: a fraction, or a count when above 1.
local function cells(size, total)
  local n = size > 1 and math.floor(size) or math.floor(total * size + 0.5)
  return math.max(1, math.min(n, total - 2))
end

local function set_local(win, options)
  for option, value in pairs(options) do
    vim.api.nvim_set_option_value(option, value, { scope = "local", win = win })
  end
end

--- Opens a window on `buf` where the options say, without entering it.
function M.open(buf, title)
  local opts = config.values.agent
  local position = SPLITS[opts.position] and opts.position or (opts.position == "float" and "float" or "right")
  local win
  if position == "float" then
    local columns, lines = vim.o.columns, vim.o.lines - vim.o.cmdheight
    local width = cells(opts.size, columns)
    local height = opts.size > 1 and math.max(1, lines - 4) or cells(opts.size, lines)
    win = vim.api.nvim_open_win(buf, false, {
      relative = "editor",
      width = width,
      height = height,
      row = math.floor((lines - height) / 2) - 1,
      col = math.floor((columns - width) / 2),
      border = "rounded",
      title = " " .. title .. " ",
      title_pos = "center",
    })
  else
    local vertical = position == "right" or position == "left"
    local split = { split = SPLITS[position], win = -1 }
    if vertical then
      split.width = cells(opts.size, vim.o.columns)
    else
      split.height = cells(opts.size, vim.o.lines - vim.o.cmdheight)
    end
    win = vim.api.nvim_open_win(buf, false, split)
    set_local(win, { winfixwidth = vertical, winfixheight = not vertical })
  end
  set_local(win, { number = false, relativenumber = false, signcolumn = "no", foldcolumn = "0", spell = false })
  return win
end

--- Closes `win`; the last window of Neovim shows another buffer instead.
function M.close(win, buf)
  if pcall(vim.api.nvim_win_close, win, false) then
    return
  end
  vim.api.nvim_win_call(win, function()
    local alternate = vim.fn.bufnr("#")
    if alternate > 0 and alternate ~= buf and vim.fn.buflisted(alternate) == 1 then
      vim.cmd.buffer(alternate)
    else
      vim.cmd.enew()
    end
  end)
end

--- The window of the current tab showing `buf`, if any.
function M.in_tab(buf)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  return nil
end

--- Enters `win` in terminal mode.
function M.enter(win)
  vim.api.nvim_set_current_win(win)
  vim.cmd.startinsert()
end

return M
