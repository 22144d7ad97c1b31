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

--- The right window's: the keys that decide, then which file and how it
--- changed; `dirty`: the person's buffer of it has unsaved edits.
function M.right(spec, dirty)
  local on = keys.configured()
  local function key(name, command)
    return on[name] and (util.display_key(on[name]) .. "/" .. command) or command
  end
  local decide = {
    ("%s keep"):format(key("accept", ":w")),
    ("%s revert"):format(on.reject and util.display_key(on.reject) or ":PiIde reject"),
  }
  if on.hunk_accept and on.hunk_reject then
    decide[#decide + 1] = ("%s/%s keep/revert hunk"):format(
      util.display_key(on.hunk_accept),
      util.display_key(on.hunk_reject)
    )
  end
  decide[#decide + 1] = ":q later"
  local edit = spec.edit
  if edit.count > 1 then
    decide[#decide + 1] = (on.accept_all and util.display_key(on.accept_all) or ":PiIde accept all") .. " keep all"
  end
  local change = edit.turn.change
  local about = {
    ("%s (%s)"):format(vim.fn.fnamemodify(spec.path, ":~:."), change == "deleted" and "deleted now" or change),
    ("changes since %s%s"):format(
      since(spec),
      edit.count > 1 and (" (file %d of %d)"):format(edit.index, edit.count) or ""
    ),
  }
  local bar = util.escape_statusline(table.concat(decide, " · "))
    .. " · %<"
    .. util.escape_statusline(table.concat(about, " · "))
  if dirty then
    bar = "%#WarningMsg#⚠ your unsaved edits are not shown, and stay in their buffer%* · " .. bar
  end
  return bar
end

return M
