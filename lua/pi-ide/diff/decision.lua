-- Tells the host, once, what the person decided about a diff, or that they
-- closed it without deciding. An accepted proposal is sent as the buffer
-- holds it now: the person's edits included, in the buffer's line endings.
local seam = require("pi-ide.seam")

local M = {}

local function proposal_text(buf)
  local newline = vim.bo[buf].fileformat == "dos" and "\r\n" or "\n"
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), newline)
  if vim.bo[buf].eol then
    text = text .. newline
  end
  return text
end

--- The proposal of `entry` as the buffer holds it now.
function M.text(entry)
  return proposal_text(entry.proposed_buf)
end

--- Reports `accepted` for `entry` unless it is settled already; true if it
--- was reported now. `closed`: not a decision, the person closed the diff
--- (a rejection to every agent but Gemini CLI's and Qwen Code's). `reason`:
--- why they rejected it, for agents that read it (Codex, opencode).
function M.report(entry, accepted, closed, reason)
  if entry.decided then
    return false
  end
  entry.decided, entry.accepted = true, accepted
  if closed then
    seam.notify("diff_closed", entry.id)
  elseif accepted then
    -- The agent writes an openDiff's file once it hears: watched from
    -- before. The host applies an MCP edit itself.
    if not entry.edit or entry.edit.agent_writes then
      require("pi-ide.diff.reload").watch(entry.path)
    end
    seam.notify("diff_decided", entry.id, true, proposal_text(entry.proposed_buf))
  elseif reason and vim.trim(reason) ~= "" then
    seam.notify("diff_decided", entry.id, false, reason)
  else
    seam.notify("diff_decided", entry.id, false)
  end
  return true
end

return M
