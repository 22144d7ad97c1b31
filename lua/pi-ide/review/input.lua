-- The floating window a comment is typed in: several lines, <C-s> (or <CR>
-- in Normal mode) saves, <Esc> or q in Normal mode cancels, and so does
-- leaving the window. Nothing waits for it: saving calls back.
local M = {}

local open -- { win, buf } of the input shown now

--- Closes the input, if one is shown, without saving.
function M.close()
  local current = open
  open = nil
  if current and vim.api.nvim_win_is_valid(current.win) then
    pcall(vim.api.nvim_win_close, current.win, true)
  end
end

--- The input's window, if one is shown.
function M.win()
  return open and open.win
end

--- Opens an input under the cursor titled `title`, holding `text` (nil for
--- a new comment); `on_save(text)` gets what was typed, trailing blank
--- lines dropped.
function M.open(title, text, on_save)
  M.close()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "markdown"
  local lines = text and vim.split(text, "\n", { plain = true }) or { "" }
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local width = math.max(20, math.min(72, vim.o.columns - 6))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = "cursor",
    row = 1,
    col = 0,
    width = width,
    height = math.min(math.max(#lines + 1, 4), 12),
    style = "minimal",
    border = "rounded",
    title = " " .. title .. " ",
    footer = " <C-s> save · Normal mode: <CR> save, q or <Esc> cancel ",
    footer_pos = "right",
  })
  vim.wo[win].wrap = true
  local current = { win = win, buf = buf }
  open = current

  local function save()
    if open ~= current then
      return
    end
    local typed = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    while #typed > 0 and vim.trim(typed[#typed]) == "" do
      typed[#typed] = nil
    end
    vim.cmd("stopinsert")
    M.close()
    on_save(table.concat(typed, "\n"))
  end
  local function cancel()
    vim.cmd("stopinsert")
    M.close()
  end
  local function map(modes, lhs, fn, desc)
    vim.keymap.set(modes, lhs, fn, { buffer = buf, nowait = true, desc = "pi-ide: " .. desc })
  end
  map({ "n", "i" }, "<C-s>", save, "save the comment")
  map("n", "<CR>", save, "save the comment")
  map("n", "<Esc>", cancel, "cancel the comment")
  map("n", "q", cancel, "cancel the comment")
  vim.api.nvim_create_autocmd("WinLeave", {
    buffer = buf,
    once = true,
    callback = function()
      -- After the move, so the window it goes to stays current.
      vim.schedule(function()
        if open == current then
          M.close()
        end
      end)
    end,
  })
  vim.api.nvim_win_set_cursor(win, { #lines, #lines[#lines] })
  if text then
    vim.cmd("startinsert!")
  else
    vim.cmd("startinsert")
  end
  return win
end

return M
