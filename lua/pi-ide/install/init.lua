-- :PiIde install and the lazy.nvim build step: the release's prebuilt host
-- binary for this machine when the checkout is a release, verified and put
-- in place with one rename; otherwise (no release for this version, no
-- network, no curl, unknown target, bad checksum) a cargo build, saying why.
local config = require("pi-ide.config")
local release = require("pi-ide.install.release")
local util = require("pi-ide.util")

local M = {}

local running = false

--- Where a downloaded host binary goes.
function M.binary()
  return util.root() .. "/bin/pi-ide"
end

-- Whether the checkout at `root` is release v`version`: its commit carries
-- that tag. A copy that is not a git checkout is taken for a release.
local function is_release(task, root, version)
  if not vim.uv.fs_stat(root .. "/.git") then
    return true
  end
  local tag = "v" .. version
  if vim.fn.executable("git") ~= 1 then
    return false, ("git is not on PATH to tell whether this checkout is release %s"):format(tag)
  end
  local tags = task.run({ "git", "-C", root, "tag", "--points-at", "HEAD" }, { text = true })
  if tags.code == 0 and vim.tbl_contains(vim.split(vim.trim(tags.stdout), "\n"), tag) then
    return true
  end
  local head = task.run({ "git", "-C", root, "rev-parse", "--short=12", "HEAD" }, { text = true })
  local at = head.code == 0 and vim.trim(head.stdout) or "?"
  return false, ("the checkout is at commit %s, not at release tag %s"):format(at, tag)
end

--- Where releases are downloaded from and who said so: option
--- `release_url`, else $PI_IDE_RELEASE_URL, else the GitHub releases of
--- the repository the plugin was cloned from; or nil and why there is none.
---@param task pi-ide.InstallTask
---@return string?, string
function M.release_base(task)
  if config.values.release_url then
    return config.values.release_url, "option `release_url`"
  end
  local env = vim.env.PI_IDE_RELEASE_URL
  if env and env ~= "" then
    return env, "$PI_IDE_RELEASE_URL"
  end
  local root = util.root()
  local remote = ""
  if vim.fn.executable("git") == 1 and vim.uv.fs_stat(root .. "/.git") then
    local result = task.run({ "git", "-C", root, "remote", "get-url", "origin" }, { text = true })
    remote = result.code == 0 and vim.trim(result.stdout) or ""
  end
  local base = release.github_releases(remote)
  if base then
    return base, "the releases of " .. remote
  end
  local fix = "set option `release_url` or $PI_IDE_RELEASE_URL"
  return nil,
    ("no release URL: the checkout's origin (%s) is not a GitHub repository; %s"):format(
      remote ~= "" and remote or "none",
      fix
    )
end

-- Downloads the release binary; true and a message, or false and why not.
local function download(task, version)
  local root = util.root()
  local target, no_target = release.target()
  if not target then
    return false, no_target
  end
  local at_release, not_release = is_release(task, root, version)
  if not at_release then
    return false, not_release
  end
  local base, no_base = M.release_base(task)
  if not base then
    return false, no_base
  end
  if vim.fn.executable("curl") ~= 1 then
    return false, "curl is not on PATH to download the release binary"
  end
  local name = release.asset_name(target)
  local want = {
    url = release.asset_url(base, version, name),
    checksum_url = release.asset_url(base, version, name .. ".sha256"),
    dest = M.binary(),
    version = version,
    seam = require("pi-ide.seam").VERSION,
  }
  local sha256, refused = require("pi-ide.install.download").fetch(task, want)
  if not sha256 then
    return false, refused
  end
  require("pi-ide.install.record").write(want.dest, {
    source = "download",
    version = version,
    target = target,
    url = want.url,
    sha256 = sha256,
  })
  return true, ("installed the prebuilt host v%s for %s from %s"):format(version, target, want.url)
end

-- The install itself, run as a task.
local function install(task, from_source)
  local version, unknown = release.version(util.root())
  local reason = "asked to build from source"
  if not from_source then
    if not version then
      reason = unknown
    else
      local ok, message = download(task, version)
      if ok then
        return true, message
      end
      reason = message
    end
  end
  return require("pi-ide.build").cargo(task, reason, version)
end

---@class pi-ide.InstallOpts
---@field from_source? boolean build with cargo without trying a download (:PiIde build)
---@field on_progress? fun(line: string, kind: "step"|"output") default: steps as notifications
---@field on_done? fun(ok: boolean, message: string) default: a notification

--- Installs the host binary for this checkout in the background, then
--- restarts the host if it runs. False when an install already runs.
---@param opts? pi-ide.InstallOpts
---@return boolean
function M.run(opts)
  opts = opts or {}
  if running then
    util.notify("an install is already running")
    return false
  end
  running = true
  local on_progress = opts.on_progress
    or function(line, kind)
      if kind == "step" then
        util.notify(line)
      end
    end
  local on_done = opts.on_done
    or function(ok, message)
      util.notify(message, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
    end
  require("pi-ide.install.task").start(
    function(task)
      return install(task, opts.from_source)
    end,
    on_progress,
    function(ok, message)
      running = false
      local host = require("pi-ide.host")
      if ok and host.channel() then
        message = message .. "; restarting the host"
        host.restart()
      end
      on_done(ok, message)
    end
  )
  return true
end

--- Whether an install or build is running.
function M.running()
  return running
end

return M
