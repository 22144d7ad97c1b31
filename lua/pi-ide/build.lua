-- Builds the host from source with cargo, streaming cargo's lines as
-- progress, and records the commit it was built at and why.
local util = require("pi-ide.util")

local M = {}

M.COMMAND = { "cargo", "build", "--release", "--locked" }

--- Where cargo puts the release build.
function M.binary()
  return util.root() .. "/target/release/pi-ide"
end

-- The commit the checkout is at, or nil (no git, not a checkout).
local function commit(task, root)
  if vim.fn.executable("git") ~= 1 or not vim.uv.fs_stat(root .. "/.git") then
    return nil
  end
  local result = task.run({ "git", "-C", root, "rev-parse", "HEAD" }, { text = true })
  return result.code == 0 and vim.trim(result.stdout) or nil
end

--- Runs cargo in the plugin directory; `reason` says why the host is
--- built rather than downloaded. Returns ok and what happened.
---@param task pi-ide.InstallTask
---@param reason string
---@param version string?
---@return boolean, string
function M.cargo(task, reason, version)
  local root = util.root()
  if vim.fn.executable("cargo") ~= 1 then
    local rust = "install Rust 1.90 or newer (https://rustup.rs) and run :PiIde install"
    return false, ("%s; cargo is not on PATH to build it instead: %s"):format(reason, rust)
  end
  local at = commit(task, root)
  task.progress(("building from source (%s): %s"):format(table.concat(M.COMMAND, " "), reason))
  local pending, tail = "", {}
  local function line(text)
    if text ~= "" then
      tail[#tail + 1] = text
      if #tail > 15 then
        table.remove(tail, 1)
      end
      task.progress(vim.trim(text), "output")
    end
  end
  local result = task.run(M.COMMAND, {
    cwd = root,
    text = true,
    -- cargo reports progress on stderr; lines arrive in pieces.
    stderr = function(_, data)
      if not data then
        return
      end
      vim.schedule(function()
        local lines = vim.split(pending .. data, "\n", { plain = true })
        pending = table.remove(lines)
        for _, text in ipairs(lines) do
          line(text)
        end
      end)
    end,
  })
  -- Every chunk was handled before the exit callback resumed this task.
  line(pending)
  if result.code ~= 0 then
    return false, ("cargo build failed (exit %d):\n%s"):format(result.code, table.concat(tail, "\n"))
  end
  if not vim.uv.fs_stat(M.binary()) then
    return false, ("cargo build succeeded but left no %s"):format(M.binary())
  end
  require("pi-ide.install.record").write(M.binary(), {
    source = "cargo",
    version = version,
    commit = at,
    reason = reason,
  })
  local built = at and ("at commit %s"):format(at:sub(1, 12)) or "from this copy"
  return true, ("built the host from source %s: %s"):format(built, reason)
end

return M
