-- describe/it for the Lua specs, which run without a test framework:
--   nvim --headless -u NONE -i NONE -n -l tests/lua/<name>_spec.lua
-- A spec loads this with dofile, declares its cases and ends with finish(),
-- which prints `N passed, N failed` and exits non-zero on any failure.
local M = {}

-- Specs test this checkout, not an installed copy.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
vim.opt.rtp:prepend(root)

local passed, failed = 0, 0
local names = {} -- the enclosing describe blocks

function M.describe(name, body)
  names[#names + 1] = name
  body()
  names[#names] = nil
end

function M.it(name, body)
  local full = table.concat(names, " ") .. " " .. name
  local ok, err = xpcall(body, debug.traceback)
  if ok then
    passed = passed + 1
    print("ok   " .. full)
  else
    failed = failed + 1
    print("FAIL " .. full .. "\n" .. tostring(err))
  end
end

local Expectation = {}
Expectation.__index = Expectation

--- `expect(actual):equals(expected)` and the like; a mismatch fails the `it`.
function M.expect(actual)
  return setmetatable({ actual = actual }, Expectation)
end

local function fail(message)
  error(message, 3)
end

function Expectation:equals(expected)
  if not vim.deep_equal(self.actual, expected) then
    fail(("expected %s\n     got %s"):format(vim.inspect(expected), vim.inspect(self.actual)))
  end
end

function Expectation:is_true()
  if self.actual ~= true then
    fail("expected true, got " .. vim.inspect(self.actual))
  end
end

function Expectation:contains(item)
  if type(self.actual) ~= "table" or not vim.tbl_contains(self.actual, item) then
    fail(("expected %s to contain %s"):format(vim.inspect(self.actual), vim.inspect(item)))
  end
end

--- `actual` is a function that must raise an error containing `text`.
function Expectation:fails_with(text)
  local ok, err = pcall(self.actual)
  if ok then
    fail(("expected an error containing %q, got none"):format(text))
  end
  if not tostring(err):find(text, 1, true) then
    fail(("expected an error containing %q, got %q"):format(text, tostring(err)))
  end
end

--- Prints the tally and ends Neovim: status 1 if anything failed.
function M.finish()
  print(("%d passed, %d failed"):format(passed, failed))
  if failed > 0 or passed == 0 then
    vim.cmd("cquit 1")
  end
  vim.cmd("qall!")
end

return M
