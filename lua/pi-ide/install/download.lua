-- Downloads a release's host binary, checks it against the release's
-- SHA-256 and that it runs as the version and seam this plugin expects,
-- and only then moves it into place with one rename: a failed or refused
-- download never replaces the binary that was there.
local M = {}

local uv = vim.uv

local function curl(task, url, max_seconds, out)
  local cmd = { "curl", "--fail", "--silent", "--show-error", "--location" }
  vim.list_extend(cmd, { "--connect-timeout", "10", "--max-time", tostring(max_seconds) })
  if out then
    vim.list_extend(cmd, { "--output", out })
  end
  cmd[#cmd + 1] = url
  local result = task.run(cmd, { text = true })
  if result.code ~= 0 then
    local why = vim.trim(result.stderr or "")
    return nil, ("cannot download %s: %s"):format(url, why ~= "" and why or ("curl exited with " .. result.code))
  end
  return result.stdout
end

-- vim.fn.sha256() takes a string and refuses one with NUL bytes (a
-- binary), so the system's tool does it.
local SHA256_TOOLS = {
  { "sha256sum" },
  { "shasum", "-a", "256" },
  { "openssl", "dgst", "-sha256", "-r" },
}

--- The SHA-256 of the file at `path` (lowercase hex), or nil and why not.
function M.sha256(task, path)
  for _, tool in ipairs(SHA256_TOOLS) do
    if vim.fn.executable(tool[1]) == 1 then
      local cmd = vim.list_extend(vim.deepcopy(tool), { path })
      local result = task.run(cmd, { text = true })
      local hex = result.code == 0 and result.stdout:match("^(%x+)")
      if hex and #hex == 64 then
        return hex:lower()
      end
    end
  end
  return nil, "no sha256sum, shasum or openssl to check the download with"
end

-- `pi-ide <version> seam <n>` from the binary at `path`, or why it does not run.
local function identify(task, path)
  local result = task.run({ path, "--version" }, { text = true })
  local version, seam = (result.stdout or ""):match("^pi%-ide (%S+) seam (%d+)")
  if result.code ~= 0 or not version then
    local why = vim.trim(result.stderr or "")
    return nil, nil, why ~= "" and why or ("it exited with " .. result.code)
  end
  return version, tonumber(seam)
end

---@class pi-ide.Download
---@field url string the binary's address
---@field checksum_url string its `.sha256`
---@field dest string where the binary goes
---@field version string the version it must report
---@field seam integer the seam version it must speak

--- Downloads `want.url` beside `want.dest`, verifies it and renames it
--- over `want.dest`. Returns the SHA-256, or nil and why it was refused.
---@param task pi-ide.InstallTask
---@param want pi-ide.Download
---@return string?, string?
function M.fetch(task, want)
  task.progress("downloading " .. want.checksum_url)
  local listed, err = curl(task, want.checksum_url, 30)
  if not listed then
    return nil, err
  end
  local expected = listed:match("^%s*(%x+)")
  if not expected or #expected ~= 64 then
    return nil, ("%s holds no SHA-256"):format(want.checksum_url)
  end
  expected = expected:lower()
  local dir = vim.fs.dirname(want.dest)
  vim.fn.mkdir(dir, "p")
  local temp = ("%s/.%s.download-%d"):format(dir, vim.fs.basename(want.dest), uv.os_getpid())
  local function refuse(why)
    os.remove(temp)
    return nil, why
  end
  task.progress("downloading " .. want.url)
  local fetched, fetch_err = curl(task, want.url, 600, temp)
  if not fetched then
    return refuse(fetch_err)
  end
  local actual, sum_err = M.sha256(task, temp)
  if not actual then
    return refuse(sum_err)
  end
  if actual ~= expected then
    return refuse(("the download's SHA-256 %s is not the release's %s: refused"):format(actual, expected))
  end
  uv.fs_chmod(temp, 493) -- 0755
  local version, seam, why = identify(task, temp)
  if not version then
    return refuse(("the downloaded binary does not run here: %s"):format(why))
  end
  if version ~= want.version or seam ~= want.seam then
    return refuse(
      ("the downloaded binary is pi-ide %s seam %d, not %s seam %d: refused"):format(
        version,
        seam,
        want.version,
        want.seam
      )
    )
  end
  local renamed, rename_err = uv.fs_rename(temp, want.dest)
  if not renamed then
    return refuse(("cannot move the download to %s: %s"):format(want.dest, rename_err))
  end
  return actual
end

return M
