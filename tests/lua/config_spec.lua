-- Option validation and :PiIde command completion.
local t = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

vim.cmd("runtime plugin/pi-ide.lua")

local notified = {}
vim.notify = function(msg, level)
  table.insert(notified, { msg = msg, level = level })
end

local config = require("pi-ide.config")

describe("config.apply", function()
  it("merges valid options over the defaults and reports nothing", function()
    notified = {}
    local values, problems = config.apply({ selection = { debounce_ms = 50 }, log_level = "debug" })
    expect(values.selection.debounce_ms):equals(50)
    expect(values.selection.enabled):equals(true)
    expect(values.log_level):equals("debug")
    expect(problems):equals({})
    expect(notified):equals({})
  end)

  describe("with mistakes", function()
    notified = {}
    local values, problems = config.apply({
      selection = { debouce_ms = 5, debounce_ms = "fast" },
      auto_strat = true,
      log_level = "loud",
      diff = { keymaps = false },
    })
    local shown = notified

    it("reports a typo by its full name", function()
      expect(problems):contains("unknown option `selection.debouce_ms` (ignored)")
    end)
    it("reports an unknown top-level key", function()
      expect(problems):contains("unknown option `auto_strat` (ignored)")
    end)
    it("falls back to the default for a wrong type", function()
      expect(values.selection.debounce_ms):equals(100)
    end)
    it("falls back for a bad log level", function()
      expect(values.log_level):equals("info")
    end)
    it("allows diff keymaps = false", function()
      expect(values.diff.keymaps):equals(false)
    end)
    it("shows the problems in one vim.notify warning", function()
      expect(#shown):equals(1)
      expect(shown[1].level):equals(vim.log.levels.WARN)
    end)
  end)

  it("never throws on a non-table opts", function()
    local values, problems = config.apply("nonsense")
    expect(values.auto_start):equals(true)
    expect(#problems):equals(1)
  end)

  it("refuses a negative debounce", function()
    local values, problems = config.apply({ selection = { debounce_ms = -1 } })
    expect(values.selection.debounce_ms):equals(100)
    expect(#problems):equals(1)
  end)

  it("accepts strings for options that default to nil", function()
    local values = config.apply({ bin = "/opt/pi-ide", lock_dir = "~/locks" })
    expect(values.bin):equals("/opt/pi-ide")
    expect(values.lock_dir):equals("~/locks")
  end)

  describe("suggestion", function()
    it("takes any filetype name and keeps the default switches", function()
      local values, problems = config.apply({ suggestion = { filetypes = { markdown = false } } })
      expect(values.suggestion.filetypes.markdown):equals(false)
      expect(values.suggestion.filetypes.gitcommit):equals(false)
      expect(problems):equals({})
    end)
    it("refuses a count above 3", function()
      local values, problems = config.apply({ suggestion = { count = 7 } })
      expect(values.suggestion.count):equals(3)
      expect(#problems):equals(1)
      expect(problems[1]:find("suggestion.count") ~= nil):is_true()
    end)
    it("allows keymaps = false", function()
      local values = config.apply({ suggestion = { keymaps = false } })
      expect(values.suggestion.keymaps):equals(false)
    end)
    it("turns one key off and keeps the others", function()
      local values, problems =
        config.apply({ suggestion = { keymaps = { accept = false, next = "<C-n>", bogus = "x" } } })
      expect(values.suggestion.keymaps.accept):equals(false)
      expect(values.suggestion.keymaps.dismiss):equals("<C-]>")
      expect(values.suggestion.keymaps.next):equals("<C-n>")
      expect(#problems):equals(1)
      expect(problems[1]:find("suggestion.keymaps.bogus") ~= nil):is_true()
    end)
  end)
end)

describe(":PiIde", function()
  local commands = require("pi-ide.commands")

  it("completes subcommands", function()
    expect(commands.complete("st", "PiIde st")):equals({ "start", "status", "stop" })
  end)
  it("lists every subcommand for an empty argument", function()
    expect(#commands.complete("", "PiIde ")):equals(#commands.names())
  end)
  it("completes nothing after a finished subcommand", function()
    expect(commands.complete("", "PiIde status ")):equals({})
  end)
  it("completes suggest actions", function()
    expect(commands.complete("t", "PiIde suggest t")):equals({ "toggle" })
  end)
  it("names the valid subcommands for an unknown one", function()
    notified = {}
    vim.cmd("PiIde frobnicate")
    expect(#notified):equals(1)
    expect(notified[1].msg:find("status") ~= nil):is_true()
  end)
end)

t.finish()
