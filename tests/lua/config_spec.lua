-- Lua-only checks of option validation, command completion and <Plug> maps.
-- Run: nvim --headless -u NONE -l tests/lua/config_spec.lua (from the repo root).
vim.opt.rtp:prepend(vim.fn.getcwd())
vim.cmd("runtime plugin/pi-ide.lua")

local notified = {}
vim.notify = function(msg, level)
  table.insert(notified, { msg = msg, level = level })
end

local failures = 0
local function check(name, ok, detail)
  if ok then
    print("ok   " .. name)
  else
    failures = failures + 1
    print("FAIL " .. name .. (detail and (": " .. vim.inspect(detail)) or ""))
  end
end

local config = require("pi-ide.config")

local values, problems = config.apply({ selection = { debounce_ms = 50 }, log_level = "debug" })
check("valid options merge over the defaults", values.selection.debounce_ms == 50 and values.selection.enabled == true)
check("valid options report nothing", #problems == 0 and #notified == 0, problems)
check("log level kept", values.log_level == "debug")

notified = {}
values, problems = config.apply({
  selection = { debouce_ms = 5, debounce_ms = "fast" },
  auto_strat = true,
  log_level = "loud",
  diff = { keymaps = false },
})
check(
  "a typo is reported by its full name",
  vim.tbl_contains(problems, "unknown option `selection.debouce_ms` (ignored)"),
  problems
)
check(
  "an unknown top-level key is reported",
  vim.tbl_contains(problems, "unknown option `auto_strat` (ignored)"),
  problems
)
check("a wrong type falls back to the default", values.selection.debounce_ms == 100, values.selection)
check("a bad log level falls back", values.log_level == "info")
check("keymaps = false is allowed", values.diff.keymaps == false)
check("problems are shown with vim.notify as a warning", #notified == 1 and notified[1].level == vim.log.levels.WARN)

values, problems = config.apply("nonsense")
check("a non-table opts never throws", values.auto_start == true and #problems == 1, problems)

values, problems = config.apply({ selection = { debounce_ms = -1 } })
check("a negative debounce is refused", values.selection.debounce_ms == 100 and #problems == 1, problems)

values = config.apply({ bin = "/opt/pi-ide", lock_dir = "~/locks" })
check("nil-default options accept strings", values.bin == "/opt/pi-ide" and values.lock_dir == "~/locks")

values, problems = config.apply({ suggestion = { filetypes = { markdown = false }, count = 7, keymaps = false } })
check("filetypes take any filetype name", values.suggestion.filetypes.markdown == false and #problems == 1, problems)
check("the default filetype switches stay", values.suggestion.filetypes.gitcommit == false)
check(
  "a count above 3 is refused",
  values.suggestion.count == 3 and problems[1]:find("suggestion.count") ~= nil,
  problems
)
check("suggestion keymaps = false is allowed", values.suggestion.keymaps == false)

values, problems = config.apply({ suggestion = { keymaps = { accept = false, next = "<C-n>", bogus = "x" } } })
check("one suggestion key can be turned off", values.suggestion.keymaps.accept == false)
check(
  "others keep their defaults",
  values.suggestion.keymaps.dismiss == "<C-]>" and values.suggestion.keymaps.next == "<C-n>"
)
check("an unknown key is reported", #problems == 1 and problems[1]:find("suggestion.keymaps.bogus") ~= nil, problems)

local complete = require("pi-ide.commands").complete
check(
  "completion lists subcommands",
  vim.deep_equal(complete("st", "PiIde st"), { "start", "status", "stop" }),
  complete("st", "PiIde st")
)
check(
  "completion of an empty argument lists everything",
  #complete("", "PiIde ") == #require("pi-ide.commands").names()
)
check("no completion after a finished subcommand", #complete("", "PiIde status ") == 0)
check(
  "suggest actions complete",
  vim.deep_equal(complete("t", "PiIde suggest t"), { "toggle" }),
  complete("t", "PiIde suggest t")
)

check(
  "<Plug> mappings exist",
  vim.fn.maparg("<Plug>(PiIdeDiffAccept)", "n") ~= "" and vim.fn.maparg("<Plug>(PiIdeDiffReject)", "n") ~= ""
)

notified = {}
vim.cmd("PiIde frobnicate")
check("an unknown subcommand names the valid ones", #notified == 1 and notified[1].msg:find("status") ~= nil, notified)

if failures > 0 then
  print(failures .. " failed")
  vim.cmd("cquit 1")
end
print("all passed")
vim.cmd("qall!")
