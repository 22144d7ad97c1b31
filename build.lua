-- The build step: installs the host binary (the release's prebuilt one, or
-- a cargo build), as :PiIde install does.
--
-- lazy.nvim runs this file when it installs or updates the plugin, inside a
-- coroutine it resumes every tick. Its timeout (`git.timeout`, 120 s) only
-- kills processes lazy.nvim spawns itself, so a cargo build started from
-- here may take as long as it takes; each yield shows a line in lazy's view.
-- Other plugin managers can run `nvim --headless -l build.lua`.
local in_coroutine = coroutine.running() ~= nil and not select(2, coroutine.running())

-- After an update the installer of the new checkout runs, not one loaded
-- before it.
for name in pairs(package.loaded) do
  if name == "pi-ide.build" or name:match("^pi%-ide%.install") then
    package.loaded[name] = nil
  end
end

if not pcall(require, "pi-ide.install") then
  -- Not loaded by a plugin manager: put this checkout on 'runtimepath'.
  vim.opt.runtimepath:prepend(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h"))
end

local done, ok, message = false, false, ""
local lines = {}
require("pi-ide.install").run({
  on_progress = function(line)
    lines[#lines + 1] = line
  end,
  on_done = function(success, text)
    done, ok, message = true, success, text
  end,
})

local function show(line)
  if in_coroutine then
    coroutine.yield(line)
  else
    io.stderr:write(line, "\n")
  end
end

while not done or #lines > 0 do
  local line = table.remove(lines, 1)
  if line then
    show(line)
  elseif in_coroutine then
    coroutine.yield()
  else
    vim.wait(100, function()
      return done or #lines > 0
    end)
  end
end
if not ok then
  error(message, 0)
end
show(message)
