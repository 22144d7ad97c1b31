-- LSP edits applied to a copy of a file's text (mcp/text.lua): UTF-16
-- and UTF-8 positions, several edits at one place, the end of the text,
-- and WorkspaceEdits read from disk, all without touching a buffer.
local t = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

local text = require("pi-ide.mcp.text")

local function at(line, character)
  return { line = line, character = character }
end

local function edit(first, last, new_text)
  return { range = { start = first, ["end"] = last }, newText = new_text }
end

describe("apply_edits", function()
  it("converts UTF-16 characters to bytes", function()
    -- "é" is one UTF-16 unit and two bytes; "😀" two units, four bytes.
    local out = text.apply_edits("é😀x = 1\n", { edit(at(0, 3), at(0, 4), "y") }, "utf-16")
    expect(out):equals("é😀y = 1\n")
  end)
  it("takes UTF-8 byte offsets as they are", function()
    local out = text.apply_edits("é😀x = 1\n", { edit(at(0, 6), at(0, 7), "y") }, "utf-8")
    expect(out):equals("é😀y = 1\n")
  end)
  it("applies edits from the end, those at one place in their order", function()
    local edits = {
      edit(at(0, 0), at(0, 0), "a"),
      edit(at(1, 0), at(1, 3), "TWO"),
      edit(at(0, 0), at(0, 0), "b"),
    }
    expect(text.apply_edits("one\ntwo\n", edits, "utf-16")):equals("abone\nTWO\n")
  end)
  it("replaces the whole text up to the line after the last", function()
    local out = text.apply_edits("int  f( ){}\n", { edit(at(0, 0), at(1, 0), "int f() {}\n") }, "utf-8")
    expect(out):equals("int f() {}\n")
    out = text.apply_edits("a\nb", { edit(at(1, 1), at(5, 0), ";\r\n") }, "utf-16")
    expect(out):equals("a\nb;\n")
  end)
end)

describe("workspace_edit", function()
  it("reads files that are not loaded and refuses file operations", function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, "p")
    local path = dir .. "/a.py"
    vim.fn.writefile({ "x = 1", "y = x" }, path)
    local uri = vim.uri_from_fname(path)
    local files = text.workspace_edit({
      documentChanges = { { textDocument = { uri = uri }, edits = { edit(at(1, 4), at(1, 5), "z") } } },
    }, "utf-16")
    expect(files):equals({ { path = path, text = "x = 1\ny = z\n" } })
    expect(vim.fn.bufnr(path)):equals(-1)
    local none, why = text.workspace_edit({ documentChanges = { { kind = "rename", oldUri = uri, newUri = uri } } })
    expect(none):equals(nil)
    expect(why:find("rename a file") ~= nil):is_true()
    expect(text.lf("a\r\nb\r\n")):equals("a\nb\n")
    expect(text.lf("a\r\nb\n")):equals("a\r\nb\n")
    vim.fn.delete(dir, "rf")
  end)
end)

t.finish()
