-- The winbars of a file in the review of changes: the left side is the
-- file at the baseline, the right side the file as it is now; accepting
-- keeps (the right side as it stands), rejecting reverts, closing decides
-- later. The same keys as every diff.
local keys = require("pi-ide.diff.keys")
local util = require("pi-ide.util")

local M = {}

local function since(spec)
  return os.date("%H:%M", spec.edit.turn.since)
end

--- The left window's: what the baseline held.
function M.left(spec, large)
  local change = spec.edit.turn.change
  local text = change == "new" and ("before (%s): no such file"):format(since(spec))
    or ("before (%s)"):format(since(spec))
  return util.escape_statusline(text) .. (large and " · large-file view" or "")
end

--- The right window's: how the file changed and the keys that decide,
--- then which file; `dirty`: the person's buffer of it has unsaved edits.
--- In a narrow window the start stays and the rest is cut.
function M.right(spec, dirty)
  local on = keys.configured()
  local edit = spec.edit
  local change = edit.turn.change
  local decide = {
    change == "deleted" and "deleted now" or change,
    (on.accept and util.display_key(on.accept) .. "/" or "") .. ":w keep",
    (on.reject and util.display_key(on.reject) or ":PiIde reject") .. " revert",
  }
  if on.hunk_accept and on.hunk_reject then
    decide[#decide + 1] = ("%s/%s hunk"):format(util.display_key(on.hunk_accept), util.display_key(on.hunk_reject))
  end
  decide[#decide + 1] = ":q later"
  if edit.count > 1 then
    decide[#decide + 1] = (on.accept_all and util.display_key(on.accept_all) or ":PiIde accept all") .. " keep all"
  end
  local count = edit.count > 1 and (" (file %d of %d)"):format(edit.index, edit.count) or ""
  local about = { vim.fn.fnamemodify(spec.path, ":~:."), ("changes since %s%s"):format(since(spec), count) }
  return keys.winbar(decide, about, dirty and "your unsaved edits stay in their buffer" or nil)
end

return M
