-- What the installer derives without the network: the version from
-- Cargo.toml, this machine's target, the release URLs, install records.
local t = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

local release = require("pi-ide.install.release")
local record = require("pi-ide.install.record")

local function scratch()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  return dir
end

local function write(path, text)
  local file = assert(io.open(path, "w"))
  file:write(text)
  file:close()
end

describe("release.version", function()
  it("reads the [package] version of Cargo.toml, not a dependency's", function()
    local dir = scratch()
    write(
      dir .. "/Cargo.toml",
      table.concat({
        "[workspace]",
        'version = "9.9.9"',
        "[package]",
        'name = "pi-ide"',
        'version = "1.2.3"',
        "[dependencies]",
        'tokio = { version = "1" }',
      }, "\n")
    )
    expect(release.version(dir)):equals("1.2.3")
  end)

  it("is this checkout's own version", function()
    local root = require("pi-ide.util").root()
    local version = release.version(root)
    expect(type(version)):equals("string")
    expect(version:match("^%d+%.%d+%.%d+") ~= nil):is_true()
  end)

  it("says why when there is no version", function()
    local version, why = release.version(scratch())
    expect(version):equals(nil)
    expect(why:find("Cargo.toml", 1, true) ~= nil):is_true()
  end)
end)

describe("release.target", function()
  it("names a Rust target of this machine", function()
    local target = release.target()
    local uname = vim.uv.os_uname()
    if uname.sysname == "Linux" then
      expect(target:match("^[%w_]+%-unknown%-linux%-%a+$") ~= nil):is_true()
    end
    expect(vim.startswith(target, (uname.machine:gsub("arm64", "aarch64")))):is_true()
  end)
end)

describe("release.github_releases", function()
  it("turns a GitHub remote into its releases' download address", function()
    local want = "https://github.com/someone/pi-ide.nvim/releases/download"
    for _, remote in ipairs({
      "https://github.com/someone/pi-ide.nvim.git",
      "https://github.com/someone/pi-ide.nvim",
      "git@github.com:someone/pi-ide.nvim.git",
      "ssh://git@github.com/someone/pi-ide.nvim.git",
    }) do
      expect(release.github_releases(remote)):equals(want)
    end
  end)

  it("has no address for other remotes", function()
    expect(release.github_releases("file:///tmp/pi-ide.nvim.git")):equals(nil)
    expect(release.github_releases("https://gitlab.com/someone/pi-ide.nvim.git")):equals(nil)
    expect(release.github_releases("https://github.com/someone")):equals(nil)
    expect(release.github_releases("")):equals(nil)
  end)
end)

describe("release.asset_url", function()
  it("puts the asset under v<version>, whatever the base ends with", function()
    local name = release.asset_name("x86_64-unknown-linux-gnu")
    expect(name):equals("pi-ide-x86_64-unknown-linux-gnu")
    expect(release.asset_url("http://127.0.0.1:8080/r/", "1.2.3", name)):equals(
      "http://127.0.0.1:8080/r/v1.2.3/pi-ide-x86_64-unknown-linux-gnu"
    )
  end)
end)

describe("record", function()
  it("describes a binary until the binary changes", function()
    local binary = scratch() .. "/pi-ide"
    write(binary, "one")
    expect(record.write(binary, { source = "download", version = "1.2.3" })):equals(true)
    expect(record.read(binary).version):equals("1.2.3")
    write(binary, "a longer binary")
    expect(record.read(binary)):equals(nil)
  end)

  it("is nothing for a binary without one", function()
    local binary = scratch() .. "/pi-ide"
    write(binary, "built by hand")
    expect(record.read(binary)):equals(nil)
  end)
end)

t.finish()
