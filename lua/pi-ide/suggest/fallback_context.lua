-- Outline and scope from Neovim's own tree-sitter parser, for filetypes the
-- host has no grammar for (Neovim's bundled parsers, those the person
-- installed); src/outline is the engine for every other. Runs only when a
-- suggestion is requested.
local M = {}

local definition = vim.regex([[\v(function|method|class|struct|impl|interface|trait|enum|module|type_definition)]])

local function signature(buf, node)
  local row = node:start()
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  return ("%d: %s"):format(row + 1, vim.trim(line):sub(1, 160))
end

local function is_definition(node)
  return node:named() and definition:match_str(node:type()) ~= nil
end

--- `{outline, scope, in_comment}` at (row, col), or nil without a parser.
function M.context(buf, row, col, filetype)
  local lang = vim.treesitter.language.get_lang(filetype) or filetype
  local ok, parser = pcall(vim.treesitter.get_parser, buf, lang, { error = false })
  if not ok or not parser then
    return nil
  end
  local trees = parser:parse()
  local root = trees and trees[1] and trees[1]:root()
  if not root then
    return nil
  end
  local outline, listed_rows = {}, {}
  local function walk(node, depth)
    for child in node:iter_children() do
      -- Grammars nest declarators in definitions: one entry per line.
      if is_definition(child) and not listed_rows[child:start()] then
        listed_rows[child:start()] = true
        outline[#outline + 1] = signature(buf, child)
      end
      if depth < 3 and #outline < 400 then
        walk(child, depth + 1)
      end
    end
  end
  walk(root, 0)
  local scope, scope_rows, in_comment = {}, {}, false
  local node = root:named_descendant_for_range(row, math.max(col - 1, 0), row, math.max(col - 1, 0))
  while node do
    if node:type():find("comment") then
      in_comment = true
    end
    if is_definition(node) and not scope_rows[node:start()] then
      scope_rows[node:start()] = true
      table.insert(scope, 1, signature(buf, node))
    end
    node = node:parent()
  end
  return { outline = table.concat(outline, "\n"), scope = table.concat(scope, "\n"), in_comment = in_comment }
end

return M
