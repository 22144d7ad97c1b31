-- How an installed host binary got there (downloaded, or built from source
-- at a commit, and why), kept as `<binary>.json` beside it so
-- :checkhealth can say which binary runs and why.
local M = {}

local uv = vim.uv

local function path_of(binary)
  return binary .. ".json"
end

-- The binary's size and modification time: a record describes the binary
-- only while these still match (a later `cargo build` replaces it).
local function fingerprint(binary)
  local stat = uv.fs_stat(binary)
  return stat and { size = stat.size, mtime = stat.mtime.sec, mtime_nsec = stat.mtime.nsec } or nil
end

--- Writes `fields` (plus the binary's fingerprint) as `<binary>.json`, in
--- one rename. Returns true, or false and the error.
---@param binary string
---@param fields table
---@return boolean, string?
function M.write(binary, fields)
  local record = vim.tbl_extend("force", fields, {
    binary = fingerprint(binary),
    installed = os.date("!%Y-%m-%dT%H:%M:%SZ"),
  })
  local path = path_of(binary)
  local temp = ("%s.%d.tmp"):format(path, uv.os_getpid())
  local file, err = io.open(temp, "w")
  if not file then
    return false, err
  end
  file:write(vim.json.encode(record), "\n")
  file:close()
  local renamed, rename_err = uv.fs_rename(temp, path)
  if not renamed then
    os.remove(temp)
    return false, rename_err
  end
  return true
end

--- The record of `binary`, or nil when there is none or the binary has
--- changed since it was written.
---@param binary string
---@return table?
function M.read(binary)
  local file = io.open(path_of(binary), "r")
  if not file then
    return nil
  end
  local text = file:read("*a")
  file:close()
  local ok, record = pcall(vim.json.decode, text)
  if not ok or type(record) ~= "table" or type(record.binary) ~= "table" then
    return nil
  end
  local now = fingerprint(binary)
  if not now or not vim.deep_equal(now, record.binary) then
    return nil
  end
  return record
end

return M
