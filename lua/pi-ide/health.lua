-- :checkhealth pi-ide
local M = {}

local uv = vim.uv

local function check_binary(host)
  local wanted = require("pi-ide.seam").VERSION
  local bin, problem = host.binary()
  if not bin then
    vim.health.error(problem)
    return
  end
  local result = vim.system({ bin, "--version" }, { text = true }):wait(5000)
  local seam = result.stdout and tonumber(result.stdout:match("seam (%d+)"))
  if result.code ~= 0 or not seam then
    vim.health.error(("%s --version failed: %s"):format(bin, vim.trim(result.stderr or "")))
  elseif seam ~= wanted then
    vim.health.error(("%s is stale (seam %d, Lua expects %d)"):format(bin, seam, wanted), {
      "run `cargo build --release --locked` in the plugin directory, or :PiIde build",
    })
  else
    vim.health.ok(("host binary %s (%s)"):format(bin, vim.trim(result.stdout)))
  end
end

local function check_lock_dir()
  local configured = require("pi-ide.config").values.lock_dir
  local env = vim.env.PI_IDE_LOCK_DIR
  local dir = configured and vim.fn.expand(configured)
    or ((env and env ~= "") and env or (vim.fn.expand("~") .. "/.pi/ide"))
  local stat = uv.fs_stat(dir)
  if not stat then
    vim.health.ok(("lock directory %s will be created (0700)"):format(dir))
    return
  end
  if stat.type ~= "directory" then
    vim.health.error(("lock directory %s is not a directory"):format(dir))
    return
  end
  local mode = bit.band(stat.mode, 511)
  if bit.band(mode, 63) ~= 0 then
    vim.health.warn(("lock directory %s has mode %o; the host tightens it to 0700 on start"):format(dir, mode))
  else
    vim.health.ok(("lock directory %s (mode %o)"):format(dir, mode))
  end
  if vim.fn.filewritable(dir) ~= 2 then
    vim.health.error(
      ("lock directory %s is not writable"):format(dir),
      { "fix its permissions or set PI_IDE_LOCK_DIR" }
    )
  end
end

function M.check()
  vim.health.start("pi-ide")
  if vim.fn.has("nvim-0.10") == 1 then
    vim.health.ok("Neovim " .. tostring(vim.version()))
  else
    vim.health.error("Neovim 0.10 or newer is required")
  end
  local host = require("pi-ide.host")
  check_binary(host)
  check_lock_dir()
  local status = host.status()
  if status.running then
    vim.health.ok(
      ("host running on 127.0.0.1:%d, lockfile %s, %d client(s)"):format(status.port, status.lockfile, #status.clients)
    )
  else
    vim.health.warn("host not running", { ":PiIde start, or setup({ auto_start = true })" })
  end
  vim.health.info("log: " .. host.log_path())
end

return M
