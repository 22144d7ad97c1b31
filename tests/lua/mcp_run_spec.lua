-- Run configurations from plugins that are only looked for when asked
-- (mcp/run.lua): neotest's nearest / file / suite and overseer.nvim's
-- templates, here as stand-ins with the same entry points; the person's
-- answer comes from vim.ui.select, as a picker plugin would give it.
local t = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

local sent = {}
require("pi-ide.seam").notify = function(event, payload)
  sent[#sent + 1] = { event = event, payload = payload }
  return true
end
local choice = "Run it"
local asked = {}
vim.ui.select = function(items, opts, on_choice)
  asked[#asked + 1] = opts.prompt
  expect(items):equals({ "Run it", "Don't run it" })
  on_choice(choice)
end

local run = require("pi-ide.mcp.run")
local cwd = vim.fn.tempname()
vim.fn.mkdir(cwd, "p")

local function last()
  return sent[#sent].payload
end

describe("without the plugins", function()
  it("lists nothing to run where there is no Makefile and makeprg is make", function()
    vim.o.makeprg = "make"
    run.configurations(1)
    vim.wait(2000, function()
      return #sent > 0
    end)
    expect(last().result.configurations):equals({})
  end)
end)

describe("neotest", function()
  local started = {}
  package.loaded["neotest"] = {
    run = {
      run = function(target)
        started[#started + 1] = target or "nearest"
      end,
    },
    output_panel = { open = function() end },
  }
  it("offers nearest, file and suite", function()
    run.configurations(2)
    vim.wait(2000, function()
      return last().id == 2
    end)
    local names = vim.tbl_map(function(c)
      return c.name
    end, last().result.configurations)
    expect(names):equals({ "neotest: nearest", "neotest: file", "neotest: suite" })
  end)
  it("runs the suite once the person agrees, and nothing when they decline", function()
    run.run({ id = 3, name = "neotest: suite", cwd = cwd, timeout_ms = 100 })
    expect(started):equals({ cwd })
    expect(last().result.started):equals(true)
    expect(asked[#asked]:find("neotest: suite", 1, true) ~= nil):is_true()
    choice = "Don't run it"
    run.run({ id = 4, name = "neotest: nearest", cwd = cwd, timeout_ms = 100 })
    expect(started):equals({ cwd })
    expect(last().result.declined):equals(true)
    choice = "Run it"
  end)
  package.loaded["neotest"] = nil
end)

describe("overseer.nvim", function()
  local task = {
    cmd = { "cargo", "test" },
    exit_code = 101,
    start = function(self)
      self.started = true
      for _, callback in ipairs(self.callbacks) do
        callback(self)
      end
    end,
    callbacks = {},
    subscribe = function(self, _, callback)
      self.callbacks[#self.callbacks + 1] = callback
    end,
    dispose = function(self)
      self.disposed = true
    end,
  }
  package.loaded["overseer.template"] = {
    list = function(_, done)
      done({ { name = "cargo test", desc = "the tests" } })
    end,
  }
  package.loaded["overseer"] = {
    run_template = function(opts, done)
      expect(opts):equals({ name = "cargo test", autostart = false })
      done(task)
    end,
    open = function() end,
  }
  it("lists its templates", function()
    run.configurations(5)
    vim.wait(2000, function()
      return last().id == 5
    end)
    expect(last().result.configurations[1].name):equals("overseer: cargo test")
  end)
  it("shows the task's command before starting it and gives back its exit code", function()
    run.run({ id = 6, name = "overseer: cargo test", cwd = cwd, timeout_ms = 100 })
    expect(asked[#asked]:find("cargo test", 1, true) ~= nil):is_true()
    expect(task.started):equals(true)
    expect(last().result.exit_code):equals(101)
    choice = "Don't run it"
    task.started = nil
    run.run({ id = 7, name = "overseer: cargo test", cwd = cwd, timeout_ms = 100 })
    expect(task.started):equals(nil)
    expect(task.disposed):equals(true)
    expect(last().result.declined):equals(true)
  end)
  it("refuses a name nothing offers", function()
    run.run({ id = 8, name = "nope", cwd = cwd, timeout_ms = 100 })
    expect(last().error:find("no run configuration", 1, true) ~= nil):is_true()
  end)
end)

vim.fn.delete(cwd, "rf")
t.finish()
