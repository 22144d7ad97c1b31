-- Only the seam's calls and events get through. That its lists and version
-- match the host's is checked against the host's own in
-- tests/integration/seam.rs.
local t = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

local seam = require("pi-ide.seam")

describe("seam", function()
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

  it("reads a selection's rows bounded by bytes, whatever the lines' lengths", function()
    local buf = vim.api.nvim_create_buf(false, true)
    local long = string.rep("x", 1000000)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "ab", "cd", long, "ef", long })
    -- Rows past the bytes are left out; the last one read is cut.
    expect(seam.call("selected_rows", buf, 0, 4, 100)):equals({ "ab", "cd", string.rep("x", 94) })
    expect(seam.call("selected_rows", buf, 3, 4, 10)):equals({ "ef", string.rep("x", 7) })
    expect(seam.call("selected_rows", buf, 2, 2, 5)):equals({ "xxxxx" })
    expect(seam.call("selected_rows", buf, 0, 1, 100)):equals({ "ab", "cd" })
    expect(seam.call("selected_rows", buf, 0, 9, 3)):equals({ "ab", "" })
    vim.api.nvim_buf_delete(buf, { force = true })
    expect(seam.call("selected_rows", buf, 0, 1, 100)):equals({})
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
