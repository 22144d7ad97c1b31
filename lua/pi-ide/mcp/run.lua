-- What Neovim can run for the project, and running it for an agent (seam
-- calls `run_configurations`, `run_command`): 'makeprg' (as :make, the
-- quickfix list filled from its output), overseer.nvim's templates and
-- neotest's nearest / file / suite when those plugins are installed
-- (looked for only when asked), or a shell command. Nothing runs before
-- the person says so, seeing the exact command; it runs in a terminal
-- window they see, and the answer (exit code, the last lines of output)
-- goes to the host as `tool_answer`.
local M = {}

-- The question put to the person while it waits for an answer (nil
-- otherwise), for statuslines and tests.
M.asking = nil

-- Lines of output kept for the quickfix list of a :make run.
local MAX_QUICKFIX_LINES = 10000
-- Entries of the quickfix list given back to the agent.
local MAX_QUICKFIX_ENTRIES = 50
-- Height of the terminal window a run opens.
local HEIGHT = 12

local function answer(id, payload)
  payload.id = id
  require("pi-ide.seam").notify("tool_answer", payload)
end

local function has_makefile(cwd)
  for _, name in ipairs({ "Makefile", "makefile", "GNUmakefile" }) do
    if vim.uv.fs_stat(cwd .. "/" .. name) then
      return true
    end
  end
  return false
end

--- 'makeprg' as :make runs it (`$*` with no arguments, cmdline specials
--- expanded), or nil when there is nothing to make here.
local function make_command(cwd)
  local prg = vim.o.makeprg
  if prg == "" or (prg == "make" and not has_makefile(cwd)) then
    return nil
  end
  local command = prg:find("%$%*") and prg:gsub("%$%*", "") or prg
  return vim.trim(vim.fn.expandcmd(command))
end

local NEOTEST = {
  { name = "neotest: nearest", args = nil, what = "the test nearest the cursor" },
  { name = "neotest: file", what = "the tests of the current file" },
  { name = "neotest: suite", what = "the whole test suite" },
}

--- The configurations known without waiting: make and neotest's.
local function known(cwd)
  local list = {}
  local make = make_command(cwd)
  if make then
    list[#list + 1] = {
      name = "make",
      kind = "makeprg",
      command = make,
      description = "'makeprg' as :make runs it; the quickfix list is filled from its output ('errorformat')",
    }
  end
  if package.loaded["neotest"] or pcall(require, "neotest") then
    for _, entry in ipairs(NEOTEST) do
      list[#list + 1] = { name = entry.name, kind = "neotest", description = "neotest runs " .. entry.what }
    end
  end
  return list
end

--- overseer.nvim's templates for `cwd`, given to `done(list)` (empty
--- without overseer, or if it does not answer in a second).
local function overseer_templates(cwd, done)
  local ok, template = pcall(require, "overseer.template")
  if not ok or type(template.list) ~= "function" then
    return done({})
  end
  local finished = false
  local function finish(list)
    if not finished then
      finished = true
      done(list)
    end
  end
  vim.defer_fn(function()
    finish({})
  end, 1000)
  local listed, err = pcall(template.list, { dir = cwd }, function(templates)
    local list = {}
    for _, t in ipairs(templates or {}) do
      list[#list + 1] = {
        name = "overseer: " .. t.name,
        kind = "overseer",
        template = t.name,
        description = t.desc or "an overseer.nvim template",
      }
    end
    finish(list)
  end)
  if not listed then
    finish({ { name = "overseer", kind = "error", description = tostring(err) } })
  end
end

--- Seam `run_configurations`: answers `id` with `{configurations}`.
function M.configurations(id)
  local cwd = vim.fn.getcwd()
  local list = known(cwd)
  overseer_templates(cwd, function(templates)
    vim.list_extend(list, templates)
    answer(id, { result = { configurations = list } })
  end)
end

--- Asks the person whether to run `command` (what: its name), then calls
--- `go()` or `no()`.
local function ask(what, command, cwd, go, no)
  local prompt = ("An agent asks to run %s:\n  %s\nin %s"):format(what, command, vim.fn.fnamemodify(cwd, ":~"))
  M.asking = prompt
  vim.ui.select({ "Run it", "Don't run it" }, { prompt = prompt, kind = "pi-ide.run" }, function(choice)
    M.asking = nil
    if choice == "Run it" then
      go()
    else
      no()
    end
  end)
end

--- Output lines without terminal colours and carriage returns.
local function plain(line)
  return (line:gsub("\27%[[%d;?]*[%a]", ""):gsub("\r", ""))
end

--- Runs `command` in a terminal window below the others; `done(code,
--- lines)` when it exits, `lines` its whole output (bounded).
local function in_terminal(title, command, cwd, done)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.b[buf].pi_ide_run = title
  local win = vim.api.nvim_open_win(buf, false, { split = "below", win = -1, height = HEIGHT })
  vim.wo[win].winbar = require("pi-ide.util").escape_statusline("pi-ide run: " .. title)
  local lines, partial = {}, ""
  local function keep(line)
    lines[#lines + 1] = plain(line)
    if #lines > MAX_QUICKFIX_LINES then
      table.remove(lines, 1)
    end
  end
  local job
  vim.api.nvim_buf_call(buf, function()
    job = vim.fn.jobstart(command, {
      term = true,
      cwd = cwd,
      on_stdout = function(_, data)
        data[1] = partial .. data[1]
        partial = table.remove(data)
        for _, line in ipairs(data) do
          keep(line)
        end
      end,
      on_exit = function(_, code)
        if partial ~= "" then
          keep(partial)
        end
        done(code, lines)
      end,
    })
  end)
  if job <= 0 then
    done(-1, { "could not start: " .. command })
  end
  return buf
end

--- The last `max` lines, without trailing empty ones.
local function tail(lines, max)
  local last = #lines
  while last > 0 and vim.trim(lines[last]) == "" do
    last = last - 1
  end
  return vim.list_slice(lines, math.max(1, last - max + 1), last), last > max
end

--- Fills the quickfix list from a :make run's output; its valid entries.
local function fill_quickfix(command, lines)
  vim.fn.setqflist({}, " ", { title = ":make " .. command, lines = lines, efm = vim.o.errorformat })
  local entries = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    if item.valid == 1 and #entries < MAX_QUICKFIX_ENTRIES then
      entries[#entries + 1] = {
        path = item.bufnr > 0 and vim.api.nvim_buf_get_name(item.bufnr) or "",
        line = item.lnum,
        column = item.col,
        text = vim.trim(item.text),
        type = item.type,
      }
    end
  end
  return entries
end

--- Runs a shell command (a terminal command or 'makeprg') for request `r`.
local function run_shell(r, what, command, is_make)
  local finished = false
  local function finish(payload)
    if not finished then
      finished = true
      answer(r.id, payload)
    end
  end
  ask(what, command, r.cwd, function()
    local buf
    buf = in_terminal(what, command, r.cwd, function(code, lines)
      local output, cut = tail(lines, r.max_lines or 200)
      local result = { command = command, exit_code = code, output = output, cut = cut, buffer = buf }
      if is_make then
        result.quickfix = fill_quickfix(command, lines)
      end
      finish({ result = result })
    end)
    vim.defer_fn(function()
      if not finished then
        local output = tail(vim.api.nvim_buf_get_lines(buf, 0, -1, false), r.max_lines or 200)
        finish({ result = { command = command, running = true, output = vim.tbl_map(plain, output), buffer = buf } })
      end
    end, r.timeout_ms or 60000)
  end, function()
    finish({ result = { command = command, declined = true } })
  end)
end

local function run_neotest(r, entry)
  ask(entry.name, entry.name, r.cwd, function()
    local ok, err = pcall(function()
      local neotest = require("neotest")
      local target = ({
        ["neotest: nearest"] = nil,
        ["neotest: file"] = vim.fn.expand("%:p"),
        ["neotest: suite"] = r.cwd,
      })[entry.name]
      neotest.run.run(target)
      neotest.output_panel.open()
    end)
    answer(r.id, {
      result = ok and {
        command = entry.name,
        started = true,
        note = "neotest runs it; its results show in neotest's output panel, summary and diagnostics",
      } or nil,
      error = not ok and ("neotest failed: " .. tostring(err)) or nil,
    })
  end, function()
    answer(r.id, { result = { command = entry.name, declined = true } })
  end)
end

local function run_overseer(r, template)
  local ok, overseer = pcall(require, "overseer")
  if not ok then
    return answer(r.id, { error = "overseer.nvim is not installed" })
  end
  local started, err = pcall(overseer.run_template, { name = template, autostart = false }, function(task, problem)
    if not task then
      return answer(r.id, { error = ("overseer cannot build %s: %s"):format(template, tostring(problem)) })
    end
    local command = type(task.cmd) == "table" and table.concat(task.cmd, " ") or tostring(task.cmd)
    ask("the overseer task " .. template, command, task.cwd or r.cwd, function()
      task:subscribe("on_complete", function(t)
        local lines = {}
        local buf = t.get_bufnr and t:get_bufnr()
        if buf and vim.api.nvim_buf_is_valid(buf) then
          lines = vim.tbl_map(plain, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
        end
        local output, cut = tail(lines, r.max_lines or 200)
        answer(r.id, { result = { command = command, exit_code = t.exit_code, output = output, cut = cut } })
        return false
      end)
      task:start()
      pcall(overseer.open, { enter = false })
    end, function()
      task:dispose()
      answer(r.id, { result = { command = command, declined = true } })
    end)
  end)
  if not started then
    answer(r.id, { error = "overseer failed: " .. tostring(err) })
  end
end

--- Seam `run_command`: `r` = {id, name? | command?, cwd, timeout_ms,
--- max_lines}; returns at once, answers `id` once it is decided and done.
function M.run(r)
  if r.command then
    return run_shell(r, "a terminal command", r.command, false)
  end
  if r.name and r.name:match("^overseer: ") then
    return run_overseer(r, r.name:sub(#"overseer: " + 1))
  end
  for _, entry in ipairs(known(r.cwd)) do
    if entry.name == r.name then
      if entry.kind == "makeprg" then
        return run_shell(r, "'makeprg' (:make)", entry.command, true)
      end
      return run_neotest(r, entry)
    end
  end
  answer(r.id, { error = ("no run configuration %q here: get_run_configurations lists them"):format(tostring(r.name)) })
end

return M
