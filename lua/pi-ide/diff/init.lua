-- The diff UI for openDiff: a tab with the file as on disk (left, read-only)
-- and the agent's proposal (right, editable). `:w` accepts, closing a side
-- rejects (triggers.lua says exactly what decides). Only ever touches its own
-- buffers and windows. This file keeps the open diffs and the public API;
-- layout.lua builds the tab.
local decision = require("pi-ide.diff.decision")
local layout = require("pi-ide.diff.layout")
local util = require("pi-ide.util")

local M = {}

local diffs = {} -- host diff id -> entry

local function entry_for(tab_name)
  for _, entry in pairs(diffs) do
    if tab_name == nil and entry.tabpage == vim.api.nvim_get_current_tabpage() then
      return entry
    end
    if tab_name ~= nil and entry.tab_name == tab_name then
      return entry
    end
  end
  local buf = vim.api.nvim_get_current_buf()
  for _, entry in pairs(diffs) do
    if tab_name == nil and (entry.proposed_buf == buf or entry.original_buf == buf) then
      return entry
    end
  end
  return nil
end

-- Removes the entry and its buffers (and so its windows and tab).
local function teardown(entry)
  if diffs[entry.id] ~= entry then
    return
  end
  diffs[entry.id] = nil
  entry.closed = true
  if entry.stop_watching then
    entry.stop_watching()
  end
  -- The windows go in one step, so no frame shows half a diff; then each
  -- buffer in a step of its own: wiping a side with tens of thousands of
  -- marks (a large diff with dense changes) takes milliseconds.
  local bufs = vim.tbl_filter(function(buf)
    return buf ~= nil
  end, { entry.proposed_buf, entry.original_buf })
  local function wipe(i)
    if i > #bufs then
      -- After the wipe, whose autocmds let the large view let go of its copy.
      pcall(vim.api.nvim_del_augroup_by_id, entry.group)
      return
    end
    if vim.api.nvim_buf_is_valid(bufs[i]) then
      pcall(vim.api.nvim_buf_delete, bufs[i], { force = true })
    end
    util.next_step(function()
      wipe(i + 1)
    end)
  end
  vim.schedule(function()
    for _, buf in ipairs(bufs) do
      for _, win in ipairs(vim.api.nvim_buf_is_valid(buf) and vim.fn.win_findbuf(buf) or {}) do
        -- The last window of all stays; wiping its buffer replaces it.
        pcall(vim.api.nvim_win_close, win, true)
      end
    end
    util.next_step(function()
      wipe(1)
    end)
  end)
  util.emit("PiIdeDiffClosed", {
    tab_name = entry.tab_name,
    path = entry.path,
    accepted = entry.accepted,
    client_id = entry.client_id,
    -- An MCP edit's: the process that asked for it, when known, and the
    -- group of the edit's files.
    pid = entry.edit and entry.edit.requester_pid or nil,
    group = entry.edit and entry.edit.group or nil,
  })
end

-- Whether rejecting `entry` asks the person why (its agent reads it).
local function asks_reason(entry)
  return entry.edit ~= nil and entry.edit ~= vim.NIL and entry.edit.ask_reason == true
end

-- Asks why the person rejects (for `agent`); `then_(reason)` with "" for
-- no reason; nothing when they cancel (Esc): the diff stays.
local function ask_why(agent, then_)
  vim.ui.input({ prompt = ("Why not? (%s reads it; empty: no reason) "):format(agent) }, function(input)
    if input ~= nil then
      then_(input)
    end
  end)
end

-- Reports the person's decision to the host, once, then closes the diff.
-- `closed`: they closed it without deciding (a rejection for most agents).
-- `reason`: why they reject it; asked when its agent reads it and none
-- was given.
local function decide(entry, accepted, closed, reason)
  if accepted and entry.loading then
    util.notify("the diff is still loading; accept it once it is shown", vim.log.levels.WARN)
    return
  end
  if not accepted and not closed and reason == nil and asks_reason(entry) then
    ask_why(entry.client, function(why)
      if not entry.decided then
        decide(entry, false, false, why)
      end
    end)
    return
  end
  if decision.report(entry, accepted, closed, reason) then
    teardown(entry)
  end
end

-- The person edited a proposal the agent took back: their text goes to a
-- buffer of its own instead of vanishing with the tab, unless the agent
-- `taken` it with their edits.
local function keep_edits(entry, reason, taken)
  local buf = entry.proposed_buf
  -- While a large diff loads, its buffer is modified by the text arriving.
  if entry.loading or not (buf and vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].modified) then
    return
  end
  local name = vim.fn.fnamemodify(entry.path, ":~:.")
  if taken then
    util.notify(("%s: it took your edits to the proposal for %s"):format(reason, name))
    return
  end
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local kept = require("pi-ide.diff.kept").buffer(entry.path, lines, ("your edits #%d"):format(entry.id))
  util.notify(
    ("%s: your edits to the proposal for %s are kept in buffer %d (:b %d)"):format(reason, name, kept, kept),
    vim.log.levels.WARN
  )
end

--- Seam `open_diff`: shows diff `spec`. An error makes the host answer
--- DIFF_REJECTED. A large diff answers the buffers its lines go into.
function M.open(spec)
  local entry = {
    id = spec.id,
    tab_name = spec.tab_name,
    path = spec.path,
    client = spec.client,
    -- The connection that asked (nil for MCP): which agent to go back to.
    client_id = spec.client_id ~= vim.NIL and spec.client_id or nil,
    -- An MCP tool's edit: {group, index, count, title, from_buffer, requester_pid?}.
    edit = spec.edit,
    decided = false,
  }
  diffs[spec.id] = entry
  local focus = require("pi-ide.diff.focus").take()
  if spec.edit and spec.edit.turn and spec.edit.index > 1 then
    -- A review of changes opens on its first file; the rest wait in tabs.
    focus = false
  end
  local function ready()
    util.emit("PiIdeDiffOpened", { tab_name = entry.tab_name, path = entry.path, client = entry.client })
  end
  local ok, err = pcall(layout.open, spec, entry, focus, ready)
  if ok then
    ok, err = pcall(require("pi-ide.diff.triggers").install, entry, {
      decide = decide,
      close = function(closing)
        decide(closing, false, true)
      end,
      restore = layout.restore,
    })
  end
  if not ok then
    entry.decided = true
    teardown(entry)
    error(err, 0)
  end
  -- The review of changes listed its files already.
  if not focus and not (spec.edit and spec.edit.turn) then
    util.notify_when_seen(
      ("%s proposes changes to %s: :PiIde diff to review"):format(spec.client, vim.fn.fnamemodify(spec.path, ":~:.")),
      nil,
      function()
        return not entry.decided
      end
    )
  end
  if spec.parts then
    return { original = entry.original_buf, proposed = entry.proposed_buf }
  end
  return true
end

--- Seam `diff_part`: a part of large diff `id`'s content; false once the
--- diff is gone.
function M.part(id, kind, first, a, b)
  local entry = diffs[id]
  if not entry or entry.closed then
    return false
  end
  layout.part(entry, kind, first, a, b)
  return true
end

--- Seam `close_diff`: the agent (or shutdown) closed diff `id`, for
--- `reason` (nil: the agent closed it); no decision is sent. `taken`: the
--- agent took the proposal, the person's edits included.
function M.close(id, reason, taken)
  local entry = diffs[id]
  if entry then
    entry.decided = true
    keep_edits(entry, (reason ~= nil and reason ~= vim.NIL) and reason or "the agent closed the diff", taken == true)
    teardown(entry)
  end
end

--- Seam `diff_text`: the proposal of diff `id` as the person left it, nil
--- if there is no such diff (or it is still loading).
function M.text(id)
  local entry = diffs[id]
  if not entry or entry.loading or not vim.api.nvim_buf_is_valid(entry.proposed_buf or -1) then
    return nil
  end
  return decision.text(entry)
end

--- Closes every diff without sending decisions (the host is gone).
function M.close_all()
  for id in pairs(diffs) do
    M.close(id, "the host stopped")
  end
end

---@class pi-ide.Diff
---@field tab_name string
---@field path string
---@field client string Who proposed it ("pi", "claude", "mcp").
---@field proposed_buf integer
---@field original_buf integer
---@field tabpage integer
---@field loading boolean A large diff's text is still being filled in.
---@field group? integer Diffs of one MCP edit share a group (accept_all()).

--- One table per open diff.
---@return pi-ide.Diff[]
function M.list()
  local list = {}
  for _, entry in pairs(diffs) do
    list[#list + 1] = {
      tab_name = entry.tab_name,
      path = entry.path,
      client = entry.client,
      proposed_buf = entry.proposed_buf,
      original_buf = entry.original_buf,
      tabpage = entry.tabpage,
      -- A large diff's text is still being filled in.
      loading = entry.loading == true,
      -- Diffs of one MCP edit share a group, decided with accept_all().
      group = entry.edit and entry.edit.group or nil,
    }
  end
  table.sort(list, function(a, b)
    return a.tab_name < b.tab_name
  end)
  return list
end

local function missing(tab_name)
  util.notify(tab_name and ("no diff named %q"):format(tab_name) or "no pi-ide diff in this tab", vim.log.levels.WARN)
  return false
end

local function resolve(tab_name, accepted, reason)
  local entry = entry_for(tab_name)
  if not entry then
    return missing(tab_name)
  end
  decide(entry, accepted, false, reason)
  return true
end

--- Accepts a diff (default: the one in the current tab) with the person's edits.
---@param tab_name? string
---@return boolean
function M.accept(tab_name)
  return resolve(tab_name, true)
end

--- Rejects a diff (default: the one in the current tab). `reason` goes to
--- agents that read it (Codex, opencode); without one they are asked.
---@param tab_name? string
---@param reason? string
---@return boolean
function M.reject(tab_name, reason)
  return resolve(tab_name, false, reason)
end

-- The diffs decided together with the one in the current tab: every file
-- of its edit. Outside a diff tab, the files of the only edit waiting.
local function group_entries()
  local entry = entry_for(nil)
  local group = entry and entry.edit and entry.edit.group
  if entry and not group then
    return { entry }
  end
  if not entry then
    for _, candidate in pairs(diffs) do
      local other = candidate.edit and candidate.edit.group
      if other == nil or (group and other ~= group) then
        return {}
      end
      group = other
    end
  end
  local members = {}
  for _, candidate in pairs(diffs) do
    if candidate.edit and candidate.edit.group == group then
      members[#members + 1] = candidate
    end
  end
  table.sort(members, function(a, b)
    return a.id < b.id
  end)
  return members
end

local function decide_all(accepted, reason)
  local members = group_entries()
  if #members == 0 then
    util.notify("go to a diff of the edit to decide all its files", vim.log.levels.WARN)
    return false
  end
  if not accepted and reason == nil and asks_reason(members[1]) then
    -- One question for the whole edit.
    ask_why(members[1].client, function(why)
      for _, entry in ipairs(members) do
        if not entry.decided then
          decide(entry, false, false, why)
        end
      end
    end)
    return true
  end
  for _, entry in ipairs(members) do
    decide(entry, accepted, false, reason)
  end
  return true
end

--- Accepts every file of the edit in the current tab (each with the
--- person's edits).
function M.accept_all()
  return decide_all(true)
end

--- Rejects every file of the edit in the current tab, for `reason` (asked
--- when its agent reads it and none is given).
---@param reason? string
function M.reject_all(reason)
  return decide_all(false, reason)
end

local function act_on_hunk(accepted)
  local entry = entry_for(nil)
  if not entry then
    return missing(nil)
  end
  local hunk_actions = require("pi-ide.diff.hunk_actions")
  return (accepted and hunk_actions.accept or hunk_actions.reject)(entry, decide)
end

--- Accepts the hunk under the cursor; the diff is answered once every hunk
--- is decided.
function M.accept_hunk()
  return act_on_hunk(true)
end

--- Rejects the hunk under the cursor: the proposal gets the on-disk text back.
function M.reject_hunk()
  return act_on_hunk(false)
end

--- Jumps to a diff (default: the oldest waiting one) with both sides shown
--- and the cursor in the proposal.
function M.show(tab_name)
  local entry
  if tab_name then
    entry = entry_for(tab_name)
  else
    for _, candidate in pairs(diffs) do
      if not entry or candidate.id < entry.id then
        entry = candidate
      end
    end
  end
  if not entry then
    if tab_name then
      return missing(tab_name)
    end
    util.notify("no diff is waiting")
    return false
  end
  layout.restore(entry)
  return true
end

return M
