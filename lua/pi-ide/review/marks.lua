-- How comments look: a sign on each commented line and the comment's first
-- line as virtual text at the end of its first line. Virtual text at the
-- end of a line, not virtual lines, keeps both sides of a diff aligned.
local M = {}

M.ns = vim.api.nvim_create_namespace("pi-ide.review")

--- Defines the highlight groups (`default`, so a colorscheme or the person
--- wins); again after `:colorscheme`, which clears them.
function M.define_highlights()
  vim.api.nvim_set_hl(0, "PiIdeReviewSign", { link = "DiagnosticSignInfo", default = true })
  vim.api.nvim_set_hl(0, "PiIdeReviewText", { link = "DiagnosticVirtualTextInfo", default = true })
end

local function summary(text)
  local lines = vim.split(text, "\n", { plain = true })
  local more = #lines > 1 and (" (+%d line%s)"):format(#lines - 1, #lines > 2 and "s" or "") or ""
  return " " .. lines[1] .. more
end

--- Draws comment `c` (`c.buf`, lines `first`..`last`, 1-based) and keeps
--- its extmarks in `c.mark` (follows edits) and `c.rest` (signs below).
function M.draw(c, first, last)
  M.erase(c)
  c.mark = vim.api.nvim_buf_set_extmark(c.buf, M.ns, first - 1, 0, {
    end_row = last - 1,
    sign_text = "▶",
    sign_hl_group = "PiIdeReviewSign",
    virt_text = { { summary(c.text), "PiIdeReviewText" } },
    virt_text_pos = "eol",
    priority = 20,
  })
  c.rest = {}
  for line = first + 1, last do
    c.rest[#c.rest + 1] = vim.api.nvim_buf_set_extmark(c.buf, M.ns, line - 1, 0, {
      sign_text = "┃",
      sign_hl_group = "PiIdeReviewSign",
      priority = 20,
    })
  end
end

--- Removes comment `c`'s extmarks.
function M.erase(c)
  if not vim.api.nvim_buf_is_valid(c.buf) then
    return
  end
  if c.mark then
    pcall(vim.api.nvim_buf_del_extmark, c.buf, M.ns, c.mark)
  end
  for _, id in ipairs(c.rest or {}) do
    pcall(vim.api.nvim_buf_del_extmark, c.buf, M.ns, id)
  end
  c.mark, c.rest = nil, nil
end

--- Lines `first, last` (1-based) where comment `c` is now, after any edits
--- of the file; nil if its marks are gone (the buffer was wiped).
function M.position(c)
  if not c.mark or not vim.api.nvim_buf_is_valid(c.buf) then
    return nil
  end
  local mark = vim.api.nvim_buf_get_extmark_by_id(c.buf, M.ns, c.mark, { details = true })
  if not mark[1] then
    return nil
  end
  local last = mark[3].end_row or mark[1]
  return mark[1] + 1, math.max(mark[1], last) + 1
end

return M
