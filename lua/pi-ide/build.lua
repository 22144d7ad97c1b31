-- :PiIde build: compiles the host in the background and restarts it.
local util = require("pi-ide.util")

local M = {}

local running = false

function M.run()
  if running then
    util.notify("a build is already running")
    return
  end
  if vim.fn.executable("cargo") ~= 1 then
    util.notify(
      "cargo is not on PATH: install Rust (https://rustup.rs) and run :PiIde build again",
      vim.log.levels.ERROR
    )
    return
  end
  running = true
  util.notify("building the host (cargo build --release --locked)…")
  vim.system({ "cargo", "build", "--release", "--locked" }, { cwd = util.root(), text = true }, function(result)
    vim.schedule(function()
      running = false
      if result.code ~= 0 then
        local lines = vim.split(result.stderr or "", "\n")
        local tail = vim.list_slice(lines, math.max(1, #lines - 15))
        util.notify("build failed:\n" .. table.concat(tail, "\n"), vim.log.levels.ERROR)
        return
      end
      util.notify("build finished; restarting the host")
      require("pi-ide.host").restart()
    end)
  end)
end

return M
