-- `:PiIde disk`: the file as it is on disk beside its buffer, in diff
-- mode, read-only; the buffer and its unsaved edits stay as they are
-- (`do` / `dp` move changes between them). Closing the disk side ends it.
local util = require("pi-ide.util")

local M = {}

local function disk_lines(path)
  local ok, lines = pcall(vim.fn.readfile, path, "b")
  if not ok then
    return nil
  end
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines
end

--- Shows the disk version of `buf` (default: the current buffer) to its left.
function M.show(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(buf)
  if vim.bo[buf].buftype ~= "" or path == "" then
    util.notify("this buffer has no file to compare with", vim.log.levels.WARN)
    return false
  end
  local lines = disk_lines(path)
  if not lines then
    util.notify(("%s is not on disk"):format(vim.fn.fnamemodify(path, ":~:.")), vim.log.levels.WARN)
    return false
  end
  if vim.bo[buf].fileformat == "dos" then
    for i, line in ipairs(lines) do
      lines[i] = line:gsub("\r$", "")
    end
  end
  if vim.deep_equal(lines, vim.api.nvim_buf_get_lines(buf, 0, -1, false)) then
    util.notify(("%s: the buffer and the file on disk are the same"):format(vim.fn.fnamemodify(path, ":~:.")))
    return true
  end
  local name = "pi-ide://disk/" .. vim.fn.fnamemodify(path, ":~:.")
  local old = vim.fn.bufnr("^" .. vim.fn.escape(name, "\\/.*$^~[]") .. "$")
  if old > 0 then
    pcall(vim.api.nvim_buf_delete, old, { force = true })
  end
  local disk = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(disk, 0, -1, false, lines)
  pcall(vim.api.nvim_buf_set_name, disk, name)
  vim.bo[disk].bufhidden = "wipe"
  vim.bo[disk].modifiable = false
  vim.bo[disk].filetype = vim.bo[buf].filetype
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  end
  local left = vim.api.nvim_open_win(disk, false, { split = "left", win = win })
  vim.wo[left].winbar = util.escape_statusline("on disk: " .. vim.fn.fnamemodify(path, ":~:.") .. " (read-only)")
  for _, each in ipairs({ left, win }) do
    vim.api.nvim_win_call(each, function()
      vim.cmd("diffthis")
    end)
  end
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = disk,
    once = true,
    callback = function()
      vim.schedule(function()
        if vim.api.nvim_win_is_valid(win) then
          vim.api.nvim_win_call(win, function()
            vim.cmd("diffoff")
          end)
        end
      end)
    end,
    desc = "pi-ide: the disk comparison closed",
  })
  vim.api.nvim_set_current_win(win)
  return true
end

return M
