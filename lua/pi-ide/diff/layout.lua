-- Builds a diff's tab: the file as on disk on the left (read-only), the
-- proposal on the right (editable), and winbars that say first what matters
-- (unsaved edits of yours, which file, which keys decide). Neovim's diff mode
-- compares the two, or, for large files, hunks.lua draws the host's diff.
-- The tab opens in the background when focus.lua says the person is busy.
local keys = require("pi-ide.diff.keys")
local util = require("pi-ide.util")

local M = {}

local function set_lines(buf, side)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, side.lines)
  vim.bo[buf].eol = side.eol
  vim.bo[buf].fixeol = false
  vim.bo[buf].fileformat = side.crlf and "dos" or "unix"
end

-- A buffer of the diff: written only through BufWriteCmd (`:w` decides),
-- hidden rather than wiped when another buffer takes its window, and marked
-- so auto-save plugins can skip it (vim.b.pi_ide_diff).
local function make_buffer(name, side, filetype, tab_name)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  -- The text arrives without undo history: `u` must not empty the buffer.
  vim.bo[buf].undolevels = -1
  set_lines(buf, side)
  vim.bo[buf].undolevels = -123456
  -- Filling it is no edit of the person's: no `[+]`.
  vim.bo[buf].modified = false
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.b[buf].pi_ide_diff = tab_name
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

-- `name (proposed, tab #id)`: short in the tabline, unique while an older
-- diff of the same tab is still being wiped.
local function buffer_name(spec, side)
  local tab = spec.tab_name:gsub("[/\\]", "∕")
  return ("pi-ide://%s (%s, %s #%d)"):format(vim.fs.basename(spec.path), side, tab, spec.id)
end

local function proposal_winbar(spec, dirty)
  local on = keys.configured()
  local function key(name, command)
    return on[name] and (util.display_key(on[name]) .. "/" .. command) or command
  end
  local decide = {
    ("%s accept"):format(key("accept", ":w")),
    ("%s reject"):format(key("reject", ":q")),
  }
  if on.hunk_accept and on.hunk_reject then
    decide[#decide + 1] = ("%s/%s hunk"):format(util.display_key(on.hunk_accept), util.display_key(on.hunk_reject))
  end
  local edit = spec.edit
  if edit and edit.count > 1 then
    -- One edit of several files: decided together, or file by file.
    for _, verb in ipairs({ "accept", "reject" }) do
      local lhs = on[verb .. "_all"]
      decide[#decide + 1] = lhs and ("%s %s all"):format(util.display_key(lhs), verb) or (":PiIde %s all"):format(verb)
    end
  end
  local about = { ("%s%s"):format(vim.fn.fnamemodify(spec.path, ":~:."), spec.original_exists and "" or " (new)") }
  if spec.original_path ~= spec.path then
    about[#about + 1] = "replaces " .. vim.fn.fnamemodify(spec.original_path, ":~:.")
  end
  if edit then
    about[#about + 1] = ("%s: %s%s"):format(
      spec.client,
      edit.title,
      edit.count > 1 and (" (file %d of %d)"):format(edit.index, edit.count) or ""
    )
  else
    about[#about + 1] = ("%s: %s"):format(spec.client, spec.tab_name)
  end
  return keys.winbar(decide, about, dirty and "your unsaved edits not shown" or nil)
end

local function original_winbar(spec, large)
  local from = spec.original_exists and "on disk" or "new file (empty)"
  if spec.edit and spec.edit.from_buffer then
    -- Accepting writes the whole buffer: say so when that saves more.
    local buf = util.file_buffer(spec.path)
    from = buf and vim.bo[buf].modified and "%#WarningMsg#your buffer, unsaved edits included: accepting saves them%*"
      or "your buffer"
  end
  return from .. (large and " · large-file view" or "")
end

-- The file changed on disk while the diff is open: show the new contents on
-- the left so the person decides against what is really there.
local function show_disk_change(entry, spec)
  if entry.closed or not vim.api.nvim_buf_is_valid(entry.original_buf) then
    return
  end
  local ok, lines = pcall(vim.fn.readfile, spec.original_path)
  if not ok then
    lines = { "" }
  end
  local buf = entry.original_buf
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  entry.disk_lines = lines
  entry.original_bar = "%#WarningMsg#⚠ changed on disk since the agent proposed this%*"
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.wo[win].winbar = entry.original_bar
  end
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("diffupdate")
  end)
  util.notify(
    ("%s changed on disk while its diff is open"):format(vim.fn.fnamemodify(spec.original_path, ":~:.")),
    vim.log.levels.WARN
  )
end

-- Diff mode, or the large view of the host's hunks, for the two windows;
-- `again` after the tab was put back together.
local function compare(entry, left, right, again)
  if entry.host_hunks then
    local large = require("pi-ide.diff.hunks")
    if again then
      large.rebind(entry.proposed_buf, left, right)
    else
      large.open(entry, left, right, entry.group)
    end
    return
  end
  for _, win in ipairs({ left, right }) do
    vim.api.nvim_win_call(win, function()
      vim.cmd("diffthis")
    end)
  end
end

-- Creates the tab with both windows; `focus` false returns the person to
-- where they were, in the mode they were in, without running their autocmds.
local function build_tab(entry, focus)
  local from_tab, from_win = vim.api.nvim_get_current_tabpage(), vim.api.nvim_get_current_win()
  local quiet = focus and "" or "noautocmd "
  vim.cmd(quiet .. "tab sbuffer " .. entry.original_buf)
  entry.tabpage = vim.api.nvim_get_current_tabpage()
  local left = vim.api.nvim_get_current_win()
  local right = vim.api.nvim_open_win(entry.proposed_buf, focus, { split = "right", win = left })
  if not focus then
    -- The tab's label then names the proposal.
    vim.cmd(("noautocmd call nvim_set_current_win(%d)"):format(right))
    vim.cmd(("noautocmd call nvim_set_current_tabpage(%d)"):format(from_tab))
    vim.cmd(("noautocmd call nvim_set_current_win(%d)"):format(from_win))
  elseif vim.api.nvim_get_mode().mode ~= "n" then
    -- `diff.focus = "always"` while typing: decide in Normal mode.
    vim.cmd("stopinsert")
  end
  return left, right
end

-- A large diff's text arrives in parts (see src/diff/parts.rs): the host
-- puts its lines straight into both buffers, then sends the hunks, one seam
-- call each. Each is a bounded piece of work, and keys and redraws run
-- between them. `done()` runs once the last has arrived.
local function load(spec, entry, done)
  if not spec.parts then
    done()
    return
  end
  entry.loading = true
  entry.parts = { hunks = {}, words = {}, done = done }
  for _, buf in ipairs({ entry.original_buf, entry.proposed_buf }) do
    vim.bo[buf].undolevels = -1
    -- The host fills the on-disk side too (the API refuses a buffer that
    -- is not 'modifiable').
    vim.bo[buf].modifiable = true
  end
end

--- Seam `diff_part` for diff `entry`: `kind` "hunks" (hunks from index
--- `first`, with their words) or "done" (all parts arrived).
function M.part(entry, kind, first, a, b)
  local parts = entry.parts
  if not parts then
    error("diff " .. entry.id .. " takes no parts", 0)
  end
  if kind == "hunks" then
    require("pi-ide.diff.hunks").collect(parts, first, a, b)
  elseif kind == "done" then
    entry.parts = nil
    vim.bo[entry.original_buf].modifiable = false
    for _, buf in ipairs({ entry.original_buf, entry.proposed_buf }) do
      vim.bo[buf].undolevels = -123456
      vim.bo[buf].modified = false
    end
    entry.host_hunks = parts
    -- Filetype (its plugins and syntax) of each side, then the view: steps
    -- of their own.
    local function set_filetype(buf, after)
      util.next_step(function()
        if entry.filetype and vim.api.nvim_buf_is_valid(buf) then
          vim.bo[buf].filetype = entry.filetype
        end
        after()
      end)
    end
    set_filetype(entry.original_buf, function()
      set_filetype(entry.proposed_buf, function()
        util.next_step(function()
          if not entry.closed then
            entry.loading = false
            parts.done()
          end
        end)
      end)
    end)
  else
    error("unknown diff part " .. tostring(kind), 0)
  end
end

--- Opens the tab for `spec`, filling in `entry`'s buffers, windows and
--- tabpage; `focus` says whether the cursor goes to the proposal. `ready()`
--- runs once both sides are loaded and compared.
function M.open(spec, entry, focus, ready)
  -- Large diffs: the host's hunks, drawn without diff mode (hunks.lua).
  entry.host_hunks = spec.parts and {} or nil
  -- A large diff's on-disk lines stay in its buffer alone, read from there
  -- if a hunk decision needs them (hunk_actions.lua).
  entry.disk_lines = not spec.parts and spec.original.lines or nil
  -- The large view bounds the highlighting work itself (hunks.lua), once
  -- its text is all there: no highlighter redraws it part by part.
  local filetype = vim.filetype.match({ filename = spec.path })
  entry.filetype = spec.parts and filetype or nil
  if spec.parts then
    filetype = nil
  end
  local function side(text)
    return spec.parts and { lines = {}, eol = text.eol, crlf = text.crlf } or text
  end
  -- A file of the review of changes: its baseline and the file now.
  local turn = spec.edit and spec.edit.turn
  local source = turn and "before" or spec.edit and spec.edit.from_buffer and "your buffer" or "on disk"
  entry.original_buf = make_buffer(buffer_name(spec, source), side(spec.original), filetype, spec.tab_name)
  -- Not 'readonly': `:w` there accepts too.
  vim.bo[entry.original_buf].modifiable = false
  local proposed = turn and "now" or "proposed"
  entry.proposed_buf = make_buffer(buffer_name(spec, proposed), side(spec.proposed), filetype, spec.tab_name)
  entry.group = vim.api.nvim_create_augroup("PiIdeDiff" .. spec.id, { clear = true })

  local from_buffer = spec.edit and spec.edit.from_buffer
  local dirty_buf = not from_buffer and util.file_buffer(spec.original_path)
  local dirty = dirty_buf and vim.bo[dirty_buf].modified
  if turn then
    local bars = require("pi-ide.changes.winbar")
    entry.original_bar = bars.left(spec, entry.host_hunks ~= nil)
    entry.proposal_bar = bars.right(spec, dirty)
  else
    entry.original_bar = original_winbar(spec, entry.host_hunks ~= nil)
    entry.proposal_bar = proposal_winbar(spec, dirty)
  end
  local left, right = build_tab(entry, focus)
  vim.wo[left].winbar = entry.original_bar
  vim.wo[right].winbar = entry.proposal_bar
  keys.map(entry)
  require("pi-ide.diff.hunk_actions").map_undo(entry)
  load(spec, entry, function()
    compare(entry, left, right, false)
    -- The left side of an edit of a loaded file is its buffer, not the
    -- disk; of the review of changes, the baseline.
    if not from_buffer and not turn then
      entry.stop_watching = require("pi-ide.follow.paths").watch(spec.original_path, function()
        show_disk_change(entry, spec)
      end)
    end
    ready()
  end)
end

--- Shows both sides again in the diff's tab (after one was closed or
--- replaced by another buffer) and moves the cursor to the proposal.
function M.restore(entry)
  if not vim.api.nvim_tabpage_is_valid(entry.tabpage) then
    vim.cmd("tab sbuffer " .. entry.original_buf)
    entry.tabpage = vim.api.nvim_get_current_tabpage()
  end
  vim.api.nvim_set_current_tabpage(entry.tabpage)
  local wins = vim.api.nvim_tabpage_list_wins(entry.tabpage)
  local function showing(buf)
    for _, win in ipairs(wins) do
      if vim.api.nvim_win_get_buf(win) == buf then
        return win
      end
    end
  end
  local left = showing(entry.original_buf)
  local right = showing(entry.proposed_buf)
  -- A window of the tab that shows something else takes a missing side back.
  local spare = vim.tbl_filter(function(win)
    return win ~= left and win ~= right
  end, wins)
  local function bring_back(buf, split, beside)
    if spare[1] then
      local win = table.remove(spare, 1)
      vim.api.nvim_win_set_buf(win, buf)
      return win
    end
    return vim.api.nvim_open_win(buf, false, { split = split, win = beside })
  end
  right = right or bring_back(entry.proposed_buf, "right", left)
  left = left or bring_back(entry.original_buf, "left", right)
  compare(entry, left, right, true)
  vim.wo[left].winbar = entry.original_bar
  vim.wo[right].winbar = entry.proposal_bar
  vim.api.nvim_set_current_win(right)
end

return M
