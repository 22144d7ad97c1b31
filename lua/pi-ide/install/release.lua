-- What a prebuilt host binary for this checkout would be: the plugin's
-- version (read from Cargo.toml, the one place it is written), whether the
-- checkout is that release, this machine's target and the download URLs.
local M = {}

--- The plugin's version: `version` in the `[package]` section of
--- `<root>/Cargo.toml`, or nil and why it cannot be read.
---@param root string
---@return string?, string?
function M.version(root)
  local file = io.open(root .. "/Cargo.toml", "r")
  if not file then
    return nil, ("cannot read %s/Cargo.toml"):format(root)
  end
  local section
  for line in file:lines() do
    section = line:match("^%[([^%]]+)%]") or section
    local version = section == "package" and line:match('^version%s*=%s*"([^"]+)"')
    if version then
      file:close()
      return version
    end
  end
  file:close()
  return nil, ("%s/Cargo.toml names no package version"):format(root)
end

--- The Rust target this machine runs (`x86_64-unknown-linux-gnu`, …), or
--- nil and why no prebuilt binary fits it. Linux systems with musl's loader
--- get the static musl build (it runs with either libc).
---@return string?, string?
function M.target()
  local uname = vim.uv.os_uname()
  local arch = ({ x86_64 = "x86_64", amd64 = "x86_64", aarch64 = "aarch64", arm64 = "aarch64" })[uname.machine]
  local system = ({ Linux = "linux", Darwin = "darwin" })[uname.sysname]
  if not arch or not system then
    return nil, ("no prebuilt host binary is made for %s on %s"):format(uname.sysname, uname.machine)
  end
  if system == "darwin" then
    return arch .. "-apple-darwin"
  end
  local musl = vim.fn.glob("/lib/ld-musl-*.so.1") ~= ""
  return ("%s-unknown-linux-%s"):format(arch, musl and "musl" or "gnu")
end

--- `https://github.com/OWNER/REPO/releases/download` for a GitHub remote
--- URL (https, ssh or scp-like), else nil.
---@param remote string
---@return string?
function M.github_releases(remote)
  local path = remote:match("^https?://github%.com/(.+)$")
    or remote:match("^ssh://git@github%.com/(.+)$")
    or remote:match("^git@github%.com:(.+)$")
  if not path then
    return nil
  end
  local owner, repo = path:gsub("%.git$", ""):gsub("/$", ""):match("^([%w._-]+)/([%w._-]+)$")
  if not owner then
    return nil
  end
  return ("https://github.com/%s/%s/releases/download"):format(owner, repo)
end

--- The address of release `version`'s asset `name`: `<base>/v<version>/<name>`.
---@param base string
---@param version string
---@param name string
---@return string
function M.asset_url(base, version, name)
  return ("%s/v%s/%s"):format(base:gsub("/+$", ""), version, name)
end

--- The file name of the host binary for `target` in a release.
---@param target string
---@return string
function M.asset_name(target)
  return "pi-ide-" .. target
end

return M
