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

  it("checks the MCP port", function()
    local values, problems = config.apply({ mcp = { port = 70000 } })
    expect(values.mcp.port):equals(0)
    expect(values.mcp.enabled):equals(true)
    expect(#problems):equals(1)
    values = config.apply({ mcp = { enabled = false, port = 8123 } })
    expect(values.mcp):equals({
      enabled = false,
      port = 8123,
      approve_edits = true,
      session_idle_minutes = 240,
      terminal_commands = true,
    })
  end)

  it("takes approve_edits as a boolean only", function()
    local values, problems = config.apply({ mcp = { approve_edits = "no" } })
    expect(values.mcp.approve_edits):equals(true)
    expect(problems):contains("option `mcp.approve_edits` must be a boolean, got string (using the default)")
    values = config.apply({ mcp = { approve_edits = false } })
    expect(values.mcp.approve_edits):equals(false)
  end)

  it("checks the MCP session idle time: 0 (never) or more, 240 by default", function()
    expect(config.apply({}).mcp.session_idle_minutes):equals(240)
    expect(config.apply({ mcp = { session_idle_minutes = 0 } }).mcp.session_idle_minutes):equals(0)
    expect(config.apply({ mcp = { session_idle_minutes = 0.5 } }).mcp.session_idle_minutes):equals(0.5)
    for _, bad in ipairs({ -1, math.huge, 0 / 0, "60" }) do
      notified = {}
      local values, problems = config.apply({ mcp = { session_idle_minutes = bad } })
      expect(values.mcp.session_idle_minutes):equals(240)
      expect(#problems):equals(1)
      expect(problems[1]:find("mcp.session_idle_minutes", 1, true) ~= nil):equals(true)
      expect(#notified):equals(1)
    end
  end)

  it("keeps a working MCP default when the whole section is wrong", function()
    notified = {}
    local values, problems = config.apply({ mcp = "on" })
    expect(values.mcp):equals(config.defaults.mcp)
    expect(problems):equals({ "option `mcp` must be a table, got string (using the default)" })
    expect(#notified):equals(1)
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

  describe("review", function()
    it("defaults to ]r/[r and ]f/[f", function()
      local values = config.apply({})
      expect(values.review.keymaps):equals({ next = "]r", prev = "[r", next_file = "]f", prev_file = "[f" })
    end)
    it("turns keys off one by one or all at once", function()
      local values, problems = config.apply({ review = { keymaps = { next = "<C-n>", prev_file = false } } })
      expect(values.review.keymaps):equals({ next = "<C-n>", prev = "[r", next_file = "]f", prev_file = false })
      expect(problems):equals({})
      values = config.apply({ review = { keymaps = false } })
      expect(values.review.keymaps):equals(false)
    end)
    it("reports a wrong type and an unknown key", function()
      local values, problems = config.apply({ review = { keymaps = { next = 1, submit = "x" } } })
      expect(values.review.keymaps.next):equals("]r")
      expect(#problems):equals(2)
    end)
  end)

  describe("agent", function()
    it("defaults to claude in a right split of 0.4", function()
      local values = config.apply({})
      expect(values.agent.default):equals("claude")
      expect(values.agent.claude.cmd):equals({ "claude" })
      expect(values.agent.pi.cmd):equals({ "pi" })
      expect(values.agent.position):equals("right")
      expect(values.agent.size):equals(0.4)
    end)
    it("takes a command as a list, replacing the default", function()
      local values, problems = config.apply({ agent = { claude = { cmd = { "sh", "-c", "claude --ide" } } } })
      expect(values.agent.claude.cmd):equals({ "sh", "-c", "claude --ide" })
      expect(problems):equals({})
    end)
    it("takes a command as a string", function()
      local values, problems = config.apply({ agent = { pi = { cmd = "pi --model x" }, default = "pi" } })
      expect(values.agent.pi.cmd):equals("pi --model x")
      expect(values.agent.default):equals("pi")
      expect(problems):equals({})
    end)
    it("refuses empty or non-string commands", function()
      for _, cmd in ipairs({ "  ", {}, { 1 }, { "" }, { x = "claude" } }) do
        local values, problems = config.apply({ agent = { claude = { cmd = cmd } } })
        expect(values.agent.claude.cmd):equals({ "claude" })
        expect(#problems):equals(1)
        expect(problems[1]:find("agent.claude.cmd", 1, true) ~= nil):is_true()
      end
    end)
    it("refuses an unknown agent, position or a size of 0", function()
      local values, problems = config.apply({ agent = { default = "aider", position = "middle", size = 0 } })
      expect(values.agent.default):equals("claude")
      expect(values.agent.position):equals("right")
      expect(values.agent.size):equals(0.4)
      expect(#problems):equals(3)
    end)
    it("takes a float and a size in columns", function()
      local values, problems = config.apply({ agent = { position = "float", size = 100 } })
      expect(values.agent.position):equals("float")
      expect(values.agent.size):equals(100)
      expect(problems):equals({})
    end)
    it("takes agents of your own, one as the default, and refuses broken ones", function()
      local values, problems = config.apply({
        agent = {
          default = "codex",
          agents = {
            codex = { cmd = { "codex", "--full-auto" } },
            mine = { cmd = "my-pi --x", kind = "pi", env = { A = "1" } },
            new = { cmd = { "x" } },
            nocmd = {},
            odd = { cmd = { "x" }, kind = "aider" },
          },
          pi = { extensions = { nvim = false } },
          focus_after_diff = false,
        },
      })
      expect(values.agent.default):equals("codex")
      expect(values.agent.agents.codex):equals({ cmd = { "codex", "--full-auto" } })
      expect(values.agent.agents.mine):equals({ cmd = "my-pi --x", kind = "pi", env = { A = "1" } })
      local own = values.agent.agents
      expect(own.new == nil and own.nocmd == nil and own.odd == nil):equals(true)
      expect(values.agent.pi.extensions):equals({ review = true, nvim = false })
      expect(values.agent.focus_after_diff):equals(false)
      expect(#problems):equals(3)
      config.apply({})
    end)

    it("keeps ACP agents with an argv and reports the rest", function()
      local values, problems = config.apply({
        acp = {
          default = "mine",
          agents = {
            mine = { cmd = { "my-agent", "--acp" }, env = { KEY = "v" } },
            shell = { cmd = "my-agent --acp" },
            badenv = { cmd = { "x" }, env = { KEY = 1 } },
          },
        },
      })
      expect(values.acp.default):equals("mine")
      expect(values.acp.agents.mine):equals({ cmd = { "my-agent", "--acp" }, env = { KEY = "v" } })
      expect(values.acp.agents.shell == nil and values.acp.agents.badenv == nil):equals(true)
      expect(#problems):equals(2)
      config.apply({})
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
  it("completes agent arguments", function()
    expect(commands.complete("", "PiIde agent ")):equals({
      "focus",
      "new",
      "claude",
      "pi",
      "gemini",
      "qwen",
      "codex",
      "opencode",
    })
    expect(commands.complete("p", "PiIde agent p")):equals({ "pi" })
    expect(commands.complete("ag", "PiIde ag")):equals({ "agent" })
  end)
  it("completes review actions", function()
    expect(commands.complete("", "PiIde review ")):equals({ "cancel", "status", "submit" })
    expect(commands.complete("com", "PiIde com")):equals({ "comment" })
  end)
  it("completes `all` for accept and reject", function()
    expect(commands.complete("a", "PiIde accept a")):equals({ "all" })
    expect(commands.complete("", "PiIde reject ")):equals({ "all" })
    expect(commands.complete("", "PiIde diff ")):equals({})
  end)
  it("names the valid subcommands for an unknown one", function()
    notified = {}
    vim.cmd("PiIde frobnicate")
    expect(#notified):equals(1)
    expect(notified[1].msg:find("status") ~= nil):is_true()
  end)
end)

describe("the LuaCATS classes of the options", function()
  it("name every option the defaults have, in its section's class", function()
    local source = debug.getinfo(config.apply, "S").source:sub(2)
    local text = table.concat(vim.fn.readfile(source), "\n")
    -- The `---@field` lines of class `name`.
    local function fields(name)
      local block = text:match("%-%-%-@class " .. vim.pesc(name) .. "%f[^%w_.][^\n]*\n(.-)\n\n")
      local found = {}
      for field in (block or ""):gmatch("%-%-%-@field ([%w_]+)%?") do
        found[field] = true
      end
      return found
    end
    local sections = {
      context_socket = "ContextSocket",
      mcp = "Mcp",
      selection = "Selection",
      diff = "Diff",
      suggestion = "Suggestion",
      review = "Review",
      agent = "Agent",
    }
    local top = fields("pi-ide.Config")
    local missing = {}
    for key, value in pairs(config.defaults) do
      if not top[key] then
        missing[#missing + 1] = key
      end
      if type(value) == "table" and sections[key] then
        local section = fields("pi-ide.Config." .. sections[key])
        for inner in pairs(value) do
          if not section[inner] then
            missing[#missing + 1] = key .. "." .. inner
          end
        end
      end
    end
    for _, key in ipairs({ "bin", "lock_dir" }) do
      if not top[key] then
        missing[#missing + 1] = key
      end
    end
    table.sort(missing)
    expect(missing):equals({})
  end)
end)

t.finish()
