-- A loaded buffer against its file on disk: Neovim's own changed-since-read
-- check (:checktime) for that one buffer, answered here instead of by a
-- prompt, and the reload every buffer shares (follow/reload.lua). Hidden
-- buffers are never checked by Neovim itself, so the tools that read or
-- write files through buffers check first.
local M = {}

-- Neovim reports a change to a modified buffer's file once; the buffer
-- keeps this mark until it is written or read again.
local CONFLICT = "pi_ide_disk_conflict"
local watching = false

local function clear_on_read_and_write()
  if watching then
    return
  end
  watching = true
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufWritePost" }, {
    group = vim.api.nvim_create_augroup("PiIdeDisk", { clear = true }),
    callback = function(args)
      vim.b[args.buf][CONFLICT] = nil
    end,
    desc = "pi-ide: the buffer and its file agree again",
  })
end

--- Brings `buf` up to date with its file when it has no unsaved edits
--- (one undo step, views and marks kept; follow/reload.lua) and says where
--- it stands: "same", "reloaded", "conflict" (unsaved edits, and the file
--- changed too) or "deleted".
function M.sync(buf)
  local outcome = require("pi-ide.follow.reload").sync(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return outcome
  end
  if outcome == "conflict" then
    clear_on_read_and_write()
    vim.b[buf][CONFLICT] = true
  elseif outcome == "same" and vim.b[buf][CONFLICT] then
    outcome = "conflict"
  end
  return outcome
end

--- Syncs every loaded file buffer without unsaved edits, so a language
--- server asked for an edit of one file sees the others as they are on disk
--- too (an agent's own tools often write files Neovim holds unseen). Returns
--- the buffers that were reloaded. Only the edit tools pay for this walk;
--- the others check the one buffer they ask about.
function M.refresh()
  local reloaded = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if
      vim.api.nvim_buf_is_loaded(buf)
      and vim.bo[buf].buftype == ""
      and not vim.bo[buf].modified
      and vim.api.nvim_buf_get_name(buf) ~= ""
      and M.sync(buf) == "reloaded"
    then
      reloaded[#reloaded + 1] = buf
    end
  end
  return reloaded
end

return M
