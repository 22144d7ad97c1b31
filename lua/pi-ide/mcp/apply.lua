-- Seam `apply_edit`: puts an MCP edit's text into the file's buffer in one
-- undo step and, once the person approved it, writes the file (as
-- JetBrains saves) while it still leads where the host checked. A file
-- without a loaded buffer is left to the host to write after approval (it
-- never follows a link), or loaded into a buffer when approval is off.
-- Nothing is applied when the buffer (or file) no longer holds what the
-- edit was computed from ("stale": the host then shows it again on the new
-- text), or when writing the buffer would lose a change made on disk since
-- Neovim read it. The host has created the directories of a new file. Seam
-- `edit_notice` tells the person when an accepted edit was not applied as
-- it was, keeping its text.
local text = require("pi-ide.mcp.text")
local util = require("pi-ide.util")

local M = {}

local function joined(lines, eol, crlf)
  local newline = crlf and "\r\n" or "\n"
  local body = table.concat(lines, newline)
  return eol and body .. newline or body
end

-- Replaces only the lines that differ, so marks and the cursor elsewhere
-- stay; the breaks around make it one undo step of its own.
local function set_lines(buf, lines)
  local old = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local hunks = vim.diff(table.concat(old, "\n") .. "\n", table.concat(lines, "\n") .. "\n", {
    result_type = "indices",
    algorithm = "histogram",
  })
  vim.bo[buf].undolevels = vim.bo[buf].undolevels
  for i = #hunks, 1, -1 do
    local a_start, a_count, b_start, b_count = unpack(hunks[i])
    local first = a_count == 0 and a_start or a_start - 1
    vim.api.nvim_buf_set_lines(
      buf,
      first,
      first + a_count,
      false,
      vim.list_slice(lines, b_start, b_start + b_count - 1)
    )
  end
  vim.bo[buf].undolevels = vim.bo[buf].undolevels
end

local function stale(path)
  return {
    ok = false,
    stale = true,
    error = ("%s changed while the edit waited"):format(vim.fn.fnamemodify(path, ":~:.")),
  }
end

-- The file on disk still holds `expected`.
local function disk_matches(path, expected)
  local file = io.open(path, "rb")
  if not file then
    return not expected.exists
  end
  local found = file:read("*a")
  file:close()
  return expected.exists and found == joined(expected.lines, expected.eol, expected.crlf)
end

local function write_buffer(buf, path, real)
  -- `!`: never a prompt about the file having changed since it was read.
  return require("pi-ide.guard").write(buf, path, real, "silent keepalt write!")
end

--- Seam `apply_edit`: `edit` = {path, real, lines, eol, crlf, expected =
--- {lines, eol, crlf, exists}, write}. Returns {ok, error?, written,
--- no_buffer?}.
function M.apply(edit)
  local buf = util.file_buffer(edit.path)
  if edit.probe then
    return { ok = false, no_buffer = buf == nil }
  end
  if buf then
    -- First: with 'autoread' an unmodified buffer takes the disk's text
    -- here, and then no longer holds what the edit was computed from.
    local on_disk = edit.write and require("pi-ide.disk").sync(buf) ~= "same"
    if not vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), edit.expected.lines) then
      return stale(edit.path)
    end
    if on_disk then
      local name = vim.fn.fnamemodify(edit.path, ":~:.")
      return {
        ok = false,
        why = "changed on disk since you loaded it, so the accepted MCP edit was not applied: "
          .. "writing would lose that change. `:e!` loads it",
        error = ("%s changed on disk since Neovim loaded it (not by this edit); "):format(name)
          .. "the edit was not applied, so that change is not lost",
      }
    end
  elseif edit.write then
    return { ok = false, no_buffer = true }
  else
    if not disk_matches(edit.path, edit.expected) then
      return stale(edit.path)
    end
    buf = vim.fn.bufadd(edit.path)
    vim.fn.bufload(buf)
    vim.bo[buf].buflisted = true
  end
  local ok, err = pcall(set_lines, buf, edit.lines)
  if not ok then
    return { ok = false, error = ("cannot change the buffer of %s: %s"):format(edit.path, tostring(err)) }
  end
  if text.eol(buf) ~= edit.eol then
    vim.bo[buf].eol = edit.eol
    vim.bo[buf].fixeol = edit.eol
  end
  if not edit.write then
    return { ok = true, written = false }
  end
  local written, write_err = write_buffer(buf, edit.path, edit.real)
  if not written then
    return {
      ok = false,
      in_buffer = true,
      error = ("changed the buffer of %s but could not write it: %s"):format(edit.path, tostring(write_err)),
    }
  end
  return { ok = true, written = true }
end

--- Seam `edit_notice`: `notice` = {path, why, kept?} where kept = {lines}:
--- tells the person what became of an accepted edit of `path` and keeps
--- `kept` in a buffer of its own. Returns that buffer, or nil.
function M.notice(notice)
  local name = vim.fn.fnamemodify(notice.path, ":~:.")
  local kept = notice.kept ~= nil and notice.kept ~= vim.NIL and notice.kept or nil
  if not kept then
    util.notify(("%s %s"):format(name, notice.why), vim.log.levels.WARN)
    return nil
  end
  local buf = require("pi-ide.diff.kept").buffer(notice.path, kept.lines, "accepted edit, not applied")
  util.notify(
    ("%s %s; the text you accepted is kept in buffer %d (:b %d)"):format(name, notice.why, buf, buf),
    vim.log.levels.WARN
  )
  return buf
end

return M
