-- Files watched on disk for a feature rather than for a buffer: the file
-- a diff's left side shows, the file an agent writes after its diff was
-- accepted. The host's one watch covers them (follow/init.lua sends them
-- with the buffers' files). It names a newly watched file once whatever
-- happened to it, so a change is one whose stat differs from the last
-- one seen here.
local M = {}

-- path -> { [watch id] = { on_change, once, stat } }
local watched = {}
local last_id = 0

local function stat_of(path)
  local stat = vim.uv.fs_stat(path)
  if not stat then
    return "gone"
  end
  return ("%d.%d:%d:%d"):format(stat.mtime.sec, stat.mtime.nsec, stat.size, stat.ino)
end

--- The paths watched now.
---@return string[]
function M.list()
  return vim.tbl_keys(watched)
end

--- Calls `on_change()` after each change to `path` on disk (just the
--- first one with `once`), until `timeout_ms` passes (if given) or the
--- returned stop function is called.
---@param path string absolute
---@param on_change fun()
---@param opts? { once?: boolean, timeout_ms?: integer }
---@return fun() stop
function M.watch(path, on_change, opts)
  opts = opts or {}
  last_id = last_id + 1
  local id = last_id
  watched[path] = watched[path] or {}
  watched[path][id] = { on_change = on_change, once = opts.once, stat = stat_of(path) }
  local function stop()
    local at = watched[path]
    if not (at and at[id]) then
      return
    end
    at[id] = nil
    if next(at) == nil then
      watched[path] = nil
      require("pi-ide.follow").send()
    end
  end
  if opts.timeout_ms then
    vim.defer_fn(stop, opts.timeout_ms)
  end
  require("pi-ide.follow").send()
  return stop
end

--- Seam `files_changed`: `names` changed on disk or went away.
---@param names string[]
function M.on_changes(names)
  local due = {}
  for _, name in ipairs(names) do
    local stat = watched[name] and stat_of(name)
    for id, watch in pairs(watched[name] or {}) do
      if watch.stat ~= stat then
        watch.stat = stat
        due[#due + 1] = watch.on_change
        if watch.once then
          watched[name][id] = nil
        end
      end
    end
    if watched[name] and next(watched[name]) == nil then
      watched[name] = nil
    end
  end
  for _, on_change in ipairs(due) do
    vim.schedule(on_change)
  end
end

return M
