-- What the person is told about the changes: the baseline taken, the files
-- a review lists (also as a quickfix list), and what became of each file
-- once decided. A file written while its buffer has unsaved edits of the
-- person's is written all the same; the buffer keeps their edits, untouched,
-- and they are told how to compare or reload. Buffers without unsaved edits
-- take the new text at once.
local util = require("pi-ide.util")

local M = {}

local function at(since)
  return os.date("%H:%M", since)
end

--- A baseline was taken (or kept), or could not be.
function M.started(result)
  if not result.ok then
    util.notify("no baseline of the project's files: " .. tostring(result.error), vim.log.levels.WARN)
  elseif result.kept then
    util.notify(
      ("files changed since the baseline of %s: it stays, so :PiIde changes still shows them"):format(at(result.since))
    )
  else
    util.notify(("baseline taken at %s: :PiIde changes lists every file changed from now on"):format(at(result.since)))
  end
end

local function relative(file)
  return file.relative or vim.fn.fnamemodify(file.path, ":~:.")
end

--- The files a review lists, before their diffs open.
function M.listed(listing)
  local files = listing.files or {}
  local since = at(listing.since)
  if #files == 0 then
    util.notify(("no file changed since %s"):format(since))
    return
  end
  local items, counts, notes = {}, { new = 0, deleted = 0, modified = 0 }, {}
  for _, file in ipairs(files) do
    counts[file.change] = (counts[file.change] or 0) + 1
    local note = file.note ~= nil and file.note ~= vim.NIL and file.note or nil
    items[#items + 1] = { filename = file.path, lnum = 1, text = file.change .. (note and (": " .. note) or "") }
    if note then
      notes[#notes + 1] = ("%s: %s"):format(relative(file), note)
    end
  end
  vim.fn.setqflist({}, " ", { title = "pi-ide: changes since " .. since, items = items })
  local kinds = {}
  for _, change in ipairs({ "new", "deleted", "modified" }) do
    if counts[change] > 0 then
      kinds[#kinds + 1] = ("%d %s"):format(counts[change], change)
    end
  end
  -- One line when it can be: no prompt to press Enter before the diffs.
  local lines = {
    ("%d file(s) changed since %s (%s): each in a diff; :copen lists them"):format(
      #files,
      since,
      table.concat(kinds, ", ")
    ),
  }
  local shown = #files - #notes
  if shown > (listing.max_shown or shown) then
    lines[#lines + 1] = ("%d shown now; :PiIde changes again shows the rest"):format(listing.max_shown)
  end
  if listing.more then
    lines[#lines + 1] = "more files changed than listed"
  end
  vim.list_extend(lines, notes)
  util.notify(table.concat(lines, "\n"))
end

local words = {
  kept = "kept",
  written = "kept as decided (some hunks reverted)",
  reverted = "reverted",
  restored = "restored",
  removed = "removed",
  later = "left for later",
}

-- Brings the buffer of a written file up to date, unless it has unsaved
-- edits: those stay. Returns the file's name when they did.
local function follow(file)
  local buf = util.file_buffer(file.path)
  if not buf then
    return nil
  end
  if vim.bo[buf].modified then
    return relative(file)
  end
  require("pi-ide.disk").sync(buf)
  return nil
end

--- What became of each file a review showed.
function M.reviewed(result)
  if not result.ok then
    if not result.open then
      util.notify(tostring(result.error), vim.log.levels.WARN)
    end
    return
  end
  local lines, unsaved, failed = {}, {}, false
  for _, file in ipairs(result.files or {}) do
    if file.fate == "failed" then
      failed = true
      lines[#lines + 1] = ("%s: not written: %s"):format(relative(file), tostring(file.why))
    else
      lines[#lines + 1] = ("%s: %s"):format(relative(file), words[file.fate] or file.fate)
      if file.fate ~= "kept" and file.fate ~= "later" then
        unsaved[#unsaved + 1] = follow(file)
      end
    end
  end
  if #lines == 0 then
    return
  end
  for _, name in ipairs(unsaved) do
    lines[#lines + 1] = ("%s: your unsaved edits in its buffer are untouched; the file on disk holds what you "):format(
      name
    ) .. "decided (:PiIde disk compares, :e! loads it, :w writes your buffer over it)"
  end
  table.insert(lines, 1, ("changes since %s reviewed:"):format(at(result.since)))
  util.notify(table.concat(lines, "\n"), (failed or #unsaved > 0) and vim.log.levels.WARN or nil)
end

return M
