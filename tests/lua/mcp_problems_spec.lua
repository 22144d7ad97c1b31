-- The workspace diagnostics MCP get_project_problems pulls (mcp/problems.lua):
-- asked of the servers that offer them (the fake server of
-- tests/fixtures/fake_lsp.lua), cut to bounds, a server that does not
-- answer in time named and its request cancelled.
local here = vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))
local t = dofile(here .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

local problems = require("pi-ide.mcp.problems")
local root = vim.fn.tempname()
vim.fn.mkdir(root, "p")

--- The payload `problems.workspace` hands on, once it has.
local function pulled(timeout_ms)
  local payload
  problems.workspace({ timeout_ms = timeout_ms }, function(answer)
    payload = answer
  end)
  expect(vim.wait(5000, function()
    return payload ~= nil
  end, 5)):equals(true)
  return payload
end

describe("workspace diagnostics", function()
  it("are not asked for when no server offers them", function()
    expect(pulled(100)):equals({ no_server = true })
  end)

  it("are cut to the bounds, and a server that does not answer is named and cancelled", function()
    vim.filetype.add({ extension = { fake = "fake" } })
    local fake = dofile(here .. "/../fixtures/fake_lsp.lua")
    fake({ filetype = "fake", encoding = "utf-8", root = root, name = "puller", pull = true })
    fake({ filetype = "fake", encoding = "utf-16", root = root, name = "silent", pull = true })
    vim.cmd.edit(root .. "/main.fake")
    vim.bo.filetype = "fake"
    expect(vim.wait(5000, function()
      return #vim.lsp.get_clients({ method = "workspace/diagnostic" }) == 2
    end, 5)):equals(true)
    local reports = {}
    for i = 1, 5 do
      local items = {}
      for j = 1, 3 do
        items[j] = {
          range = { start = { line = j, character = 0 }, ["end"] = { line = j, character = 1 } },
          message = i .. "." .. j,
        }
      end
      reports[i] = { kind = "full", uri = vim.uri_from_fname(root .. "/f" .. i .. ".fake"), items = items }
    end
    _G.fake_lsp.workspace.puller = { items = reports }
    problems.max_reports, problems.max_diagnostics = 3, 4

    local payload = pulled(200)
    expect(payload.result.silent):equals({ "silent" })
    expect(payload.result.errors):equals({})
    local responses = payload.result.responses
    expect({ #responses, responses[1].client, responses[1].encoding }):equals({ 1, "puller", "utf-8" })
    local counts = vim.tbl_map(function(report)
      return #report.items
    end, responses[1].reports)
    expect(counts):equals({ 3, 1, 0 })
    expect(_G.fake_lsp.cancelled):equals({ puller = 0, silent = 1 })
  end)
end)

t.finish()
