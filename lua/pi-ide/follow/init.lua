-- Buffers follow their files on disk (option `watch_files`): the host
-- watches the files of loaded buffers (and those follow/paths.lua watches
-- for diffs) and says, once per quiet period, which changed. A buffer without unsaved edits takes the new text at once
-- (follow/reload.lua: one undo step, views kept); one with unsaved edits is
-- left alone and the person is told once (`:PiIde disk` compares). Neovim's
-- own W11/W12 prompts never appear for these buffers.
local reload = require("pi-ide.follow.reload")
local seam = require("pi-ide.seam")
local util = require("pi-ide.util")

local M = {}

-- Quiet time before the list of files goes to the host.
local LIST_DEBOUNCE_MS = 50

-- Kept on a buffer while its unsaved edits and its changed file disagree
-- (lua/pi-ide/disk.lua reads it too), and once the person was told so;
-- and while its file is gone.
M.CONFLICT = "pi_ide_disk_conflict"
local TOLD = "pi_ide_disk_told"
M.GONE = "pi_ide_disk_gone"

local function agree(buf)
  vim.b[buf][M.CONFLICT] = nil
  vim.b[buf][TOLD] = nil
  vim.b[buf][M.GONE] = nil
end

local timer = nil
-- Buffer name -> buffer, as last sent to the host.
local by_name = {}
-- Names of buffers whose reload waits for Neovim to allow changes.
local retry = {}

--- Whether `buf` is a loaded buffer of a file worth watching.
function M.watchable(buf)
  if not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(buf)
  return name ~= "" and not name:find("^%a[%w+.-]*://") and not name:find("/%.git/")
end

--- Sends the host every file to watch now: each loaded buffer's (with
--- option `watch_files`) and those follow/paths.lua watches.
function M.send()
  local names, buffers = {}, {}
  if require("pi-ide.config").values.watch_files then
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if M.watchable(buf) then
        local name = vim.api.nvim_buf_get_name(buf)
        if not buffers[name] then
          buffers[name] = buf
          names[#names + 1] = name
        end
      end
    end
  end
  for _, path in ipairs(require("pi-ide.follow.paths").list()) do
    if not buffers[path] then
      names[#names + 1] = path
    end
  end
  by_name = buffers
  seam.notify("watch_files", names)
end

local send_on_main_loop = vim.schedule_wrap(function()
  M.send()
end)

--- A buffer was loaded, renamed or unloaded: the list goes after a pause.
function M.on_buffers()
  timer = timer or vim.uv.new_timer()
  timer:start(LIST_DEBOUNCE_MS, 0, send_on_main_loop)
end

--- BufWritePost: Neovim's own write is no change to follow.
function M.on_write(args)
  agree(args.buf)
  if by_name[vim.api.nvim_buf_get_name(args.buf)] == args.buf then
    seam.notify("file_written", vim.api.nvim_buf_get_name(args.buf))
  else
    M.on_buffers()
  end
end

--- BufReadPost: the buffer and its file agree again.
function M.on_read(args)
  agree(args.buf)
  M.on_buffers()
end

local function relative(buf)
  return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":~:.")
end

local function tell_conflict(buf)
  vim.b[buf][M.CONFLICT] = true
  if vim.b[buf][TOLD] then
    return
  end
  vim.b[buf][TOLD] = true
  util.notify_when_seen(
    ("%s changed on disk; your unsaved changes are kept (:PiIde disk shows both)"):format(relative(buf)),
    vim.log.levels.WARN
  )
end

local function tell_gone(buf)
  if vim.b[buf][M.GONE] then
    return
  end
  vim.b[buf][M.GONE] = true
  util.notify_when_seen(
    ("%s was deleted or renamed on disk; its buffer is kept (:w writes it again)"):format(relative(buf)),
    vim.log.levels.WARN
  )
end

-- Reloads or reports one buffer (`how`: reload.sync, or reload.reload when
-- Neovim has checked it already); false when Neovim does not allow
-- changing buffers right now (a textlock).
local function follow(buf, how)
  local ok, outcome = pcall(how or reload.sync, buf)
  if not ok then
    return false
  end
  if outcome == "conflict" then
    tell_conflict(buf)
  elseif outcome == "deleted" then
    tell_gone(buf)
  else
    vim.b[buf][M.GONE] = nil
  end
  return true
end

local function retry_later()
  vim.api.nvim_create_autocmd("SafeState", {
    once = true,
    callback = function()
      local names = vim.tbl_keys(retry)
      retry = {}
      M.on_changes(names, {})
    end,
    desc = "pi-ide: reload buffers once Neovim allows it",
  })
end

local function buffer_of(name)
  local buf = by_name[name]
  if buf and vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_get_name(buf) == name then
    return buf
  end
  return nil
end

-- Changed files still to follow, in order, each once; reloads run in
-- slices of SLICE_NS so a burst never freezes Neovim for long.
local queue, queued, head, tail = {}, {}, 1, 0
local SLICE_NS = 8 * 1000 * 1000
local draining = false

local function drain()
  local deadline = vim.uv.hrtime() + SLICE_NS
  local waiting = next(retry) ~= nil
  while queue[head] do
    local name = queue[head]
    queue[head], queued[name], head = nil, nil, head + 1
    local buf = buffer_of(name)
    if buf and vim.api.nvim_buf_is_loaded(buf) and not follow(buf) then
      retry[name] = true
    end
    if queue[head] and vim.uv.hrtime() > deadline then
      vim.schedule(drain)
      return
    end
  end
  queue, head, tail, draining = {}, 1, 0, false
  if not waiting and next(retry) ~= nil then
    retry_later()
  end
end

--- Seam `files_changed`: `changed` and `gone` are the names sent.
function M.on_changes(changed, gone)
  local paths = require("pi-ide.follow.paths")
  paths.on_changes(changed)
  paths.on_changes(gone)
  for _, name in ipairs(changed) do
    if not queued[name] then
      queued[name] = true
      tail = tail + 1
      queue[tail] = name
    end
  end
  for _, name in ipairs(gone) do
    local buf = buffer_of(name)
    if buf then
      tell_gone(buf)
    end
  end
  if not draining and queue[head] then
    draining = true
    drain()
  end
end

--- FileChangedShell (Neovim noticed a change itself, on focus or
--- :checktime): no prompt; the same reload or notice as from the watch.
function M.on_file_changed_shell(args)
  if reload.checking == args.buf then
    return
  end
  local reason = vim.v.fcs_reason
  vim.v.fcs_choice = ""
  local buf = args.buf
  if reason == "conflict" then
    tell_conflict(buf)
  elseif reason == "deleted" then
    tell_gone(buf)
  elseif reason == "changed" then
    -- Buffers cannot change inside this event.
    vim.schedule(function()
      if vim.api.nvim_buf_is_loaded(buf) then
        follow(buf, reload.reload)
      end
    end)
  end
end

return M
