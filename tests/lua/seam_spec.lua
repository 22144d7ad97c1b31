-- The seam's two lists are exactly what the host expects, and nothing else
-- gets through.
local t = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

local seam = require("pi-ide.seam")

describe("seam", function()
  it("has version 2", function()
    expect(seam.VERSION):equals(2)
  end)

  it("offers exactly the calls the host makes", function()
    local names = vim.tbl_keys(seam.calls)
    table.sort(names)
    expect(names):equals({ "client", "close_diff", "models", "open_diff", "positions", "started", "suggestions" })
  end)

  it("lists every notification Lua sends, in order", function()
    expect(seam.EVENTS):equals({
      "selection",
      "diff_decided",
      "cwd",
      "suggest",
      "suggest_cancel",
      "list_models",
      "stop",
      "diagnostics_pending",
      "diagnostics",
    })
  end)

  it("refuses an unknown call by name", function()
    expect(function()
      seam.call("frobnicate")
    end):fails_with("pi-ide: unknown seam call frobnicate")
  end)

  it("returns a call's result", function()
    vim.cmd.edit("/tmp/pi-ide-seam-spec.txt")
    local positions = seam.call("positions")
    expect(positions.path):equals("/tmp/pi-ide-seam-spec.txt")
    expect(positions.mode):equals("cursor")
  end)

  it("refuses an unknown event", function()
    expect(function()
      seam.notify("frobnicate", 1)
    end):fails_with("unknown seam event frobnicate")
  end)

  it("reports false for a known event while the host is not running", function()
    expect(seam.notify("cwd", "/")):equals(false)
  end)

  it("sends a known event to the host's channel", function()
    local host, rpcnotify = require("pi-ide.host"), vim.rpcnotify
    local channel, sent = host.channel, nil
    host.channel = function()
      return 7
    end
    vim.rpcnotify = function(...)
      sent = { ... }
    end
    local ok = seam.notify("diff_decided", 3, false)
    host.channel, vim.rpcnotify = channel, rpcnotify
    expect(ok):equals(true)
    expect(sent):equals({ 7, "diff_decided", 3, false })
  end)
end)

t.finish()
