-- The review of what changed since a baseline, whoever changed it: an
-- agent's own writes, its shell, a formatter it ran, the person. The host
-- takes the baseline (a snapshot in a private git store, off this thread)
-- when an agent starts, on `:PiIde changes start` or when a chat session
-- calls start(); `:PiIde changes` lists every file changed since and shows
-- each in the two-pane diff, where hunks are kept or reverted with the
-- diff's own keys. The host writes what was decided; report.lua tells the
-- person what became of each file and of their buffers.
local seam = require("pi-ide.seam")
local util = require("pi-ide.util")

local M = {}

-- Requests waiting for the host: id -> { on_done?, on_listed?, kind, quiet? }.
local waiting = {}
local next_id = 0
-- The last baseline the host reported, for status().
local last = nil
-- Ends the requests when the host stops.
local group = nil

--- Where the host keeps the snapshots (one private git store per project).
function M.store()
  return vim.fn.stdpath("state") .. "/pi-ide/changes"
end

local function fail_all(why)
  local all = waiting
  waiting = {}
  for _, request in pairs(all) do
    if request.on_done then
      request.on_done({ ok = false, error = why })
    end
  end
end

-- Sends `event` with a new request id once the host runs (starting it if
-- needed); false and why when it cannot.
local function send(event, payload, request)
  local host = require("pi-ide.host")
  if not host.channel() and not host.start() then
    return false, "the pi-ide host cannot start (:checkhealth pi-ide)"
  end
  next_id = next_id + 1
  payload.id = next_id
  payload.store = M.store()
  waiting[next_id] = request
  if not group then
    group = vim.api.nvim_create_augroup("PiIdeChanges", { clear = true })
    vim.api.nvim_create_autocmd("User", {
      group = group,
      pattern = "PiIdeStopped",
      callback = function()
        fail_all("the pi-ide host stopped")
      end,
      desc = "pi-ide: requests about changes end with the host",
    })
  end
  if not seam.notify(event, payload) then
    waiting[next_id] = nil
    return false, "the pi-ide host is not running"
  end
  return true
end

---@class pi-ide.ChangesBaseline
---@field ok boolean
---@field error? string Why no baseline was taken.
---@field since? integer When the baseline was taken (seconds since the epoch).
---@field kept? boolean The earlier baseline stayed (`keep`, and files changed since it).
---@field git? boolean The project is a git work tree (else a plain snapshot).
---@field root? string The project's directory.

-- `keep`: an agent starting beside another drops nothing from the review.
-- `on_ready`: files changed after it is called show in `:PiIde changes`.
---@class pi-ide.ChangesStartOpts
---@field root? string The project's directory (default: the project root pi-ide follows).
---@field keep? boolean Keep this Neovim's baseline when files changed since it (default false).
---@field quiet? boolean Tell the person only when it fails (default false).
---@field on_ready? fun(baseline: pi-ide.ChangesBaseline) Once the baseline is taken, or not.

--- Takes a baseline of the project's files, off Neovim's thread: from now
--- on `:PiIde changes` lists every file that changes, whoever changes it.
--- Agent terminals (`:PiIde agent`) call it as they start; a chat session
--- calls it before its first prompt.
---@param opts? pi-ide.ChangesStartOpts
---@return boolean sent False when the host cannot run (on_ready is called with the reason).
function M.start(opts)
  opts = opts or {}
  vim.validate("opts.root", opts.root, "string", true)
  vim.validate("opts.on_ready", opts.on_ready, "function", true)
  local function done(result)
    if result.ok then
      last = result
    end
    if not opts.quiet or not result.ok then
      require("pi-ide.changes.report").started(result)
    end
    if opts.on_ready then
      opts.on_ready(result)
    end
  end
  local payload = { keep = opts.keep == true, root = opts.root and vim.fs.normalize(opts.root) or nil }
  local ok, why = send("changes_start", payload, { kind = "start", on_done = done })
  if not ok then
    done({ ok = false, error = why })
  end
  return ok
end

-- `on_listed(listing)`: the files changed since the baseline, before their
-- diffs open: `{since, root, files = {{path, relative, change, note?}}, more}`.
-- `on_done(result)`: what became of each file shown: `{ok, error?, since,
-- listed, files = {{path, relative, fate, why?}}}`, fate one of kept,
-- written, reverted, restored, removed, later, failed.
---@class pi-ide.ChangesReviewOpts
---@field root? string The project's directory (default: the project root pi-ide follows).
---@field on_listed? fun(listing: table)
---@field on_done? fun(result: table)

--- `:PiIde changes`: lists every file changed since the baseline and shows
--- each in the two-pane diff (baseline left, the file now right). `:w`
--- keeps a file as the right side shows it, the reject key puts it back
--- whole, the hunk keys keep or revert one hunk; closing it leaves it for
--- the next review.
---@param opts? pi-ide.ChangesReviewOpts
---@return boolean sent
function M.review(opts)
  opts = opts or {}
  local open = vim.tbl_filter(function(diff)
    return vim.startswith(diff.tab_name, "changes:")
  end, require("pi-ide.diff").list())
  if #open > 0 then
    util.notify(("the review of the changes is open: %d file(s) left"):format(#open))
    require("pi-ide.diff").show(open[1].tab_name)
    return true
  end
  vim.validate("opts.root", opts.root, "string", true)
  local report = require("pi-ide.changes.report")
  local payload = { root = opts.root and vim.fs.normalize(opts.root) or nil }
  local ok, why = send("changes_review", payload, {
    kind = "review",
    on_listed = function(listing)
      report.listed(listing)
      if opts.on_listed then
        opts.on_listed(listing)
      end
    end,
    on_done = function(result)
      report.reviewed(result)
      if opts.on_done then
        opts.on_done(result)
      end
    end,
  })
  if not ok then
    util.notify(why, vim.log.levels.ERROR)
  end
  return ok
end

---@class pi-ide.ChangesStatus
---@field since? integer When this Neovim's last baseline was taken.
---@field git? boolean
---@field reviewing boolean Diffs of a review are open.

--- Where the review stands.
---@return pi-ide.ChangesStatus
function M.status()
  local reviewing = false
  for _, diff in ipairs(require("pi-ide.diff").list()) do
    reviewing = reviewing or vim.startswith(diff.tab_name, "changes:")
  end
  return { since = last and last.since, git = last and last.git, reviewing = reviewing }
end

--- Seam `changes_listed`: the files review `id` shows.
function M.listed(id, listing)
  local request = waiting[id]
  if request and request.on_listed then
    request.on_listed(listing)
  end
end

--- Seam `changes_done`: what became of request `id`.
function M.done(id, result)
  local request = waiting[id]
  waiting[id] = nil
  if request and request.on_done then
    request.on_done(result)
  end
end

return M
