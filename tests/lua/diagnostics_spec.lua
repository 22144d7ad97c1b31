-- What the diagnostics feeder sends the host: the first change at once, then
-- for the rest of a burst one `diagnostics_pending` and one `diagnostics`
-- with every buffer that changed.
local t = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

vim.cmd("runtime plugin/pi-ide.lua")
require("pi-ide").setup({ auto_start = false })

-- A pretend host: every notification kept in `sent` while `running`, and
-- in `lost` while it is down (a dead channel fails the same way).
local host = require("pi-ide.host")
local running = true
host.channel = function()
  return 1
end
local sent, lost = {}, {}
vim.rpcnotify = function(_, event, ...)
  if not running then
    lost[#lost + 1] = { event = event, args = { ... } }
    error("channel closed")
  end
  sent[#sent + 1] = { event = event, args = { ... } }
end

local function count(event)
  local n = 0
  for _, message in ipairs(sent) do
    n = n + (message.event == event and 1 or 0)
  end
  return n
end

-- The files of the `n`th (default first) `diagnostics` notification.
local function next_files(n)
  n = n or 1
  local arrived = vim.wait(2000, function()
    return count("diagnostics") >= n
  end, 5)
  expect(arrived):equals(true)
  local seen = 0
  for _, message in ipairs(sent) do
    if message.event == "diagnostics" then
      seen = seen + 1
      if seen == n then
        return message.args[1]
      end
    end
  end
end

-- Waits until the last announced update has gone out, then forgets them all.
local function settle()
  local settled = vim.wait(2000, function()
    local flushed = true
    for _, message in ipairs(sent) do
      flushed = message.event == "diagnostics" or (flushed and message.event ~= "diagnostics_pending")
    end
    return flushed
  end, 5)
  expect(settled):equals(true)
  sent = {}
end

local ns = vim.api.nvim_create_namespace("diagnostics_spec")
local dir = vim.fn.tempname()
vim.fn.mkdir(dir, "p")

local function file_buffer(name)
  vim.cmd.edit(dir .. "/" .. name)
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "local x = 1", "print(y)" })
  return buf
end

local function one_error(buf, message)
  vim.diagnostic.set(ns, buf, { { lnum = 0, col = 0, message = message, severity = vim.diagnostic.severity.ERROR } })
end

describe("diagnostics", function()
  it("sends the first change at once and the rest of a storm as one pending update", function()
    local buf = file_buffer("a.lua")
    settle()
    for i = 1, 50 do
      vim.diagnostic.set(ns, buf, {
        { lnum = 1, col = 6, end_col = 7, message = "undefined y " .. i, source = "lsp", severity = 2 },
        { lnum = 0, col = 6, message = "unused x", severity = 4 },
      })
    end
    expect(count("diagnostics")):equals(1)
    expect(next_files(1)[1].diagnostics[1].message):equals("undefined y 1")
    expect(count("diagnostics_pending")):equals(1)
    local files = next_files(2)
    expect(count("diagnostics_pending")):equals(1)
    expect(count("diagnostics")):equals(2)
    expect(files):equals({
      {
        buf = buf,
        uri = vim.uri_from_fname(dir .. "/a.lua"),
        loaded = true,
        modified = true,
        diagnostics = {
          {
            severity = 2,
            message = "undefined y 50",
            source = "lsp",
            range = { start = { line = 1, character = 6 }, ["end"] = { line = 1, character = 7 } },
          },
          {
            severity = 4,
            message = "unused x",
            range = { start = { line = 0, character = 6 }, ["end"] = { line = 0, character = 6 } },
          },
        },
      },
    })
  end)

  it("sends an empty list for a buffer whose diagnostics went away", function()
    local buf = vim.fn.bufnr(dir .. "/a.lua")
    settle()
    vim.diagnostic.reset(ns, buf)
    expect(next_files()):equals({
      { buf = buf, uri = vim.uri_from_fname(dir .. "/a.lua"), loaded = true, modified = true, diagnostics = {} },
    })
  end)

  it("sends uri = vim.NIL for a buffer without a file", function()
    local scratch = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(scratch, 0, -1, false, { "text" })
    settle()
    one_error(scratch, "in scratch")
    local files = next_files()
    expect(#files):equals(1)
    expect(files[1].buf):equals(scratch)
    expect(files[1].uri):equals(vim.NIL)
    expect(#files[1].diagnostics):equals(1)
  end)

  it("sends a renamed buffer under its new uri", function()
    local buf = file_buffer("old.lua")
    one_error(buf, "e")
    settle()
    vim.cmd("silent file " .. vim.fn.fnameescape(dir .. "/new.lua"))
    local files = next_files()
    expect(#files):equals(1)
    expect(files[1].uri):equals(vim.uri_from_fname(dir .. "/new.lua"))
    expect(#files[1].diagnostics):equals(1)
  end)

  it("sends a wiped buffer with uri = vim.NIL and no diagnostics", function()
    local buf = file_buffer("gone.lua")
    one_error(buf, "e")
    settle()
    vim.cmd("silent bwipeout! " .. buf)
    expect(next_files()):equals({ { buf = buf, uri = vim.NIL, diagnostics = {} } })
  end)

  it("sends a written buffer again, its diagnostics now about its file", function()
    local buf = file_buffer("written.lua")
    settle()
    one_error(buf, "e")
    local before = next_files()
    expect(before[1].modified):equals(true)
    settle()
    vim.cmd("silent write")
    local files = next_files()
    expect({ files[1].buf, files[1].modified, #files[1].diagnostics }):equals({ buf, false, 1 })
  end)

  it("sends nothing for a renamed or wiped buffer without diagnostics", function()
    local buf = file_buffer("clean.lua")
    settle()
    vim.cmd("silent file " .. vim.fn.fnameescape(dir .. "/still_clean.lua"))
    vim.cmd("silent bwipeout! " .. buf)
    expect(sent):equals({})
  end)

  it("forgets changes while the host is down", function()
    local first, second = file_buffer("down.lua"), file_buffer("up.lua")
    settle()
    running = false
    one_error(first, "while down")
    local dropped = vim.wait(2000, function()
      for _, message in ipairs(lost) do
        if message.event == "diagnostics" then
          return true
        end
      end
      return false
    end, 5)
    expect(dropped):equals(true)
    expect(sent):equals({})
    running = true
    one_error(second, "while up")
    local files = next_files()
    expect(#files):equals(1)
    expect(files[1].buf):equals(second)
  end)

  it("sends columns in UTF-16 code units and records what was published", function()
    local buf = file_buffer("utf16.lua")
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'local s = "é😀" .. y', "" })
    settle()
    local arrived = require("pi-ide.diagnostics").arrived(buf)
    expect(arrived.empty):equals(0)
    -- Byte 22 is `y` (é: 2 bytes, 1 unit; 😀: 4 bytes, 2 units); an end
    -- past the line (23 bytes) keeps its overhang.
    vim.diagnostic.set(ns, buf, { { lnum = 0, col = 22, end_col = 25, message = "y?", severity = 1 } })
    local files = next_files()
    expect(files[1].diagnostics[1].range):equals({
      start = { line = 0, character = 19 },
      ["end"] = { line = 0, character = 22 },
    })
    settle()
    vim.diagnostic.set(ns, buf, {})
    arrived = require("pi-ide.diagnostics").arrived(buf)
    expect(arrived.namespaces[ns]):equals(true)
    expect(arrived.empty):equals(1)
  end)

  -- A language server inside Neovim that publishes one error for each
  -- file it is handed, and again when asked (`server.publish(uri, message)`).
  local server = {}
  local function start_server(buf)
    vim.lsp.start({
      name = "spec",
      root_dir = dir,
      cmd = function(dispatchers)
        local closing = false
        function server.publish(uri, message)
          dispatchers.notification("textDocument/publishDiagnostics", {
            uri = uri,
            diagnostics = {
              {
                range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 1 } },
                message = message,
                severity = 1,
              },
            },
          })
        end
        return {
          request = function(method, _, callback)
            vim.schedule(function()
              callback(nil, method == "initialize" and { capabilities = { textDocumentSync = 1 } } or vim.NIL)
            end)
            return true, 1
          end,
          notify = function(method, params)
            if method == "textDocument/didOpen" then
              vim.schedule(function()
                server.publish(params.textDocument.uri, "from the server")
              end)
            end
            return true
          end,
          is_closing = function()
            return closing
          end,
          terminate = function()
            closing = true
          end,
        }
      end,
    }, { bufnr = buf })
  end

  -- The `diagnostics` notifications about `buf` so far, each file once.
  local function about(buf)
    local files = {}
    for _, message in ipairs(sent) do
      for _, file in ipairs(message.event == "diagnostics" and message.args[1] or {}) do
        if file.buf == buf then
          files[#files + 1] = file
        end
      end
    end
    return files
  end

  -- `buf`, a file the server reported on, with no change waiting.
  local function reported(name)
    local path = dir .. "/" .. name
    vim.fn.writefile({ "x" }, path)
    local buf = vim.fn.bufadd(path)
    vim.fn.bufload(buf)
    start_server(buf)
    local idle = vim.wait(2000, function()
      local files = about(buf)
      return #files > 0 and #files[#files].diagnostics == 1 and require("pi-ide.diagnostics").idle()
    end, 5)
    expect(idle):equals(true)
    sent = {}
    return buf, vim.uri_from_fname(path)
  end

  -- Waits for the last notification about `buf` to say `uri`; none on the
  -- way said the file was loaded and clean.
  local function gone(buf, uri)
    local done = vim.wait(2000, function()
      local files = about(buf)
      return #files > 0 and files[#files].uri == uri
    end, 5)
    expect(done):equals(true)
    for _, file in ipairs(about(buf)) do
      expect({ loaded_and_clean = file.uri ~= vim.NIL and file.loaded ~= false and #file.diagnostics == 0 }):equals({
        loaded_and_clean = false,
      })
    end
  end

  it("sends a wiped buffer's file as gone, never as clean, when its server let go of it", function()
    local buf = reported("wiped.lua")
    vim.api.nvim_buf_delete(buf, {})
    gone(buf, vim.NIL)
  end)

  it("sends an unloaded buffer's file as unloaded, never as clean, when its server let go of it", function()
    local buf, uri = reported("unloaded.lua")
    vim.api.nvim_buf_delete(buf, { unload = true })
    gone(buf, uri)
    local files = about(buf)
    expect(files[#files].loaded):equals(false)
  end)

  it("sends what was waiting to go before a server lets go of the buffer", function()
    local buf, uri = reported("waiting.lua")
    server.publish(uri, "first")
    server.publish(uri, "second")
    local published = vim.wait(2000, function()
      return #vim.diagnostic.get(buf) == 1 and vim.diagnostic.get(buf)[1].message == "second"
    end, 5)
    expect(published):equals(true)
    vim.api.nvim_buf_delete(buf, {})
    gone(buf, vim.NIL)
    local last_loaded
    for _, file in ipairs(about(buf)) do
      if file.uri ~= vim.NIL then
        last_loaded = file
      end
    end
    expect(last_loaded and last_loaded.diagnostics[1].message):equals("second")
  end)

  it("sends every buffer with diagnostics when the host starts, and an empty snapshot without any", function()
    local a, b = file_buffer("all_a.lua"), file_buffer("all_b.lua")
    one_error(a, "a")
    one_error(b, "b")
    settle()
    require("pi-ide.seam").call(
      "started",
      { seam = require("pi-ide.seam").VERSION, port = 1, lockfile = "/nonexistent", pid = 1, version = "0" }
    )
    expect(count("diagnostics")):equals(1)
    local have, got = {}, {}
    for _, d in ipairs(vim.diagnostic.get()) do
      have[d.bufnr] = true
    end
    for _, file in ipairs(sent[1].args[1]) do
      got[file.buf] = #file.diagnostics > 0
    end
    expect(got[a] and got[b]):equals(true)
    expect(got):equals(have)

    vim.diagnostic.reset()
    settle()
    require("pi-ide.seam").call(
      "started",
      { seam = require("pi-ide.seam").VERSION, port = 1, lockfile = "/nonexistent", pid = 1, version = "0" }
    )
    -- The host waits for its first snapshot, so even none is sent.
    expect(sent):equals({ { event = "diagnostics", args = { {} } } })
  end)
end)

t.finish()
