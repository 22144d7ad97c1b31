-- What a reviewed file was at git HEAD, so the review shows what changed.
local M = {}

-- A `git show` of one file is quick; this bounds a hung git (a lock, a slow
-- network filesystem) so opening a review never hangs Neovim for long.
local TIMEOUT_MS = 2000

--- The lines of `file` (relative to `root`) at HEAD, or nil when `root` is
--- not in a git repository, git is missing or the file is not in HEAD.
--- (`text = true` turns CRLF into LF, as a buffer of a dos file shows it.)
function M.head_lines(root, file)
  -- `HEAD:./path` is relative to `-C root`, which need not be the top.
  local ok, result = pcall(function()
    return vim.system({ "git", "-C", root, "show", "HEAD:./" .. file }, { text = true }):wait(TIMEOUT_MS)
  end)
  if not ok or result.code ~= 0 or not result.stdout then
    return nil
  end
  local lines = vim.split(result.stdout, "\n", { plain = true })
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines
end

return M
