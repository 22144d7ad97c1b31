-- What the person does in a diff tab that decides it, and what does not.
-- Accepts: `:w` (or the accept key) in either window. Closes it undecided,
-- a rejection for most agents: closing the last window of either side, or
-- the tab (a proposal with edits asks first); wiping a side's buffer. Does
-- nothing: showing another buffer in a window (`:e`, `gf`, `:b`, pickers),
-- or `:wa` and auto-save plugins writing buffers they were not asked to.
local M = {}

-- `:wa`, `:wqa`, `:xa` and friends write every buffer without a decision.
local function writes_all()
  local last = vim.fn.histget(":", -1)
  return last:match("^%s*w%a*a%a*!?%s*$") ~= nil or last:match("^%s*x%a*a%a*!?%s*$") ~= nil
end

local function shown(buf)
  return #vim.fn.win_findbuf(buf) > 0
end

-- The proposal has edits the person would lose by rejecting.
local function edited(entry)
  return vim.api.nvim_buf_is_valid(entry.proposed_buf) and vim.bo[entry.proposed_buf].modified
end

-- A side's last window closed: close the diff, or, if the person keeps
-- their edited proposal, put the tab back together.
local function side_closed(entry, actions)
  if not edited(entry) then
    actions.close(entry)
    return
  end
  local name = vim.fn.fnamemodify(entry.path, ":t")
  local choice = vim.fn.confirm(
    ("Reject the proposal for %s? Your edits in it are lost."):format(name),
    "&Reject\n&Keep reviewing",
    2
  )
  if choice == 1 then
    actions.close(entry)
  else
    actions.restore(entry)
  end
end

--- Installs the autocmds of one diff. `actions.decide(entry, accepted)`
--- reports a decision, `actions.close(entry)` that the person closed it
--- undecided; `actions.restore(entry)` shows both sides again.
function M.install(entry, actions)
  local group = entry.group
  for _, buf in ipairs({ entry.proposed_buf, entry.original_buf }) do
    vim.api.nvim_create_autocmd("BufWriteCmd", {
      group = group,
      buffer = buf,
      callback = function()
        -- Writes of buffers the person is not in run in Neovim's autocommand
        -- window (`:wa` from elsewhere, nvim_buf_call from a plugin).
        if vim.fn.win_gettype() ~= "autocmd" and not writes_all() then
          actions.decide(entry, true)
          return
        end
        require("pi-ide.util").notify(
          ("the diff %s stays pending: :w in it accepts"):format(entry.tab_name),
          vim.log.levels.WARN
        )
      end,
    })
    vim.api.nvim_create_autocmd("BufWipeout", {
      group = group,
      buffer = buf,
      callback = function()
        actions.close(entry)
      end,
    })
  end
  vim.api.nvim_create_autocmd("WinClosed", {
    group = group,
    callback = function(args)
      local win = tonumber(args.match)
      if entry.decided or not win or not vim.api.nvim_win_is_valid(win) then
        return
      end
      local buf = vim.api.nvim_win_get_buf(win)
      if buf ~= entry.proposed_buf and buf ~= entry.original_buf then
        return
      end
      -- After the close: is that side still shown anywhere?
      vim.schedule(function()
        if not entry.decided and not shown(buf) then
          side_closed(entry, actions)
        end
      end)
    end,
  })
end

return M
