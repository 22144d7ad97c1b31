-- :PiIde subcommands and their completion.
local util = require("pi-ide.util")

local M = {}

local function agent_line()
  local agent = package.loaded["pi-ide.agent"] and package.loaded["pi-ide.agent"].status()
  if not agent then
    return nil
  end
  return ("agent terminal: %s (pid %d%s)"):format(
    agent.name,
    agent.pid,
    agent.visible and "" or ", hidden: :PiIde agent"
  )
end

local function describe_host(status, lines)
  lines[#lines + 1] = ("listening on 127.0.0.1:%d (host pid %d, v%s)"):format(status.port, status.pid, status.version)
  lines[#lines + 1] = "lockfile: " .. status.lockfile
  if status.claude_lockfile then
    lines[#lines + 1] = "Claude Code lockfile: " .. status.claude_lockfile
  end
  if status.mcp_url then
    lines[#lines + 1] = "MCP endpoint: " .. status.mcp_url .. " (:PiIde mcp)"
  end
  if status.socket then
    lines[#lines + 1] = ("pi context socket: %s (start pi in %s)"):format(
      status.socket,
      vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(status.socket)))
    )
  elseif status.socket_error then
    lines[#lines + 1] = "pi context socket: none: " .. status.socket_error
  end
  if #status.clients == 0 then
    lines[#lines + 1] = "clients: none (run /ide in pi, or claude --ide)"
  end
  for _, client in ipairs(status.clients) do
    lines[#lines + 1] = ("client %d: %s%s"):format(
      client.id,
      client.kind,
      client.name and (" (" .. client.name .. ")") or ""
    )
  end
  for _, diff in ipairs(status.diffs) do
    lines[#lines + 1] = ("diff %s from %s waiting for you: %s (:PiIde diff %s)"):format(
      diff.tab_name,
      diff.client or "?",
      diff.path,
      diff.tab_name
    )
  end
end

local function describe(status)
  local lines = {}
  if status.running then
    describe_host(status, lines)
  else
    lines[1] = "not running (:PiIde start)"
  end
  for _, mention in ipairs(require("pi-ide.mention").queued()) do
    lines[#lines + 1] = ("mention %s waits for Claude Code"):format(mention)
  end
  lines[#lines + 1] = agent_line()
  local review = package.loaded["pi-ide.review"]
  if review and review.status() then
    lines[#lines + 1] = review.describe()
  end
  return table.concat(lines, "\n")
end

local subcommands = {
  start = function()
    require("pi-ide.host").start()
  end,
  stop = function()
    if not require("pi-ide.host").stop() then
      util.notify("not running")
    end
  end,
  restart = function()
    require("pi-ide.host").restart()
  end,
  status = function()
    util.notify(describe(require("pi-ide").status()))
  end,
  log = function()
    vim.cmd("tabedit " .. vim.fn.fnameescape(require("pi-ide.host").log_path()))
  end,
  send = function(_, command)
    if command and command.range > 0 then
      require("pi-ide.mention").send(command.line1, command.line2)
    else
      local line = vim.fn.line(".")
      require("pi-ide.mention").send(line, line)
    end
  end,
  diff = function(args)
    require("pi-ide.diff").show(args[1])
  end,
  -- `all`: every file of the edit in this tab (an MCP rename's group).
  accept = function(args)
    local diff = require("pi-ide.diff")
    if args[1] == "all" then
      diff.accept_all()
    else
      diff.accept(args[1])
    end
  end,
  reject = function(args)
    local diff = require("pi-ide.diff")
    if args[1] == "all" then
      diff.reject_all()
    else
      diff.reject(args[1])
    end
  end,
  install = function()
    require("pi-ide.install").run()
  end,
  build = function()
    require("pi-ide.install").run({ from_source = true })
  end,
  suggest = function(args)
    local suggest = require("pi-ide.suggest")
    local actions = {
      toggle = suggest.toggle_auto,
      accept = suggest.accept,
      dismiss = suggest.dismiss,
      next = suggest.next,
      prev = suggest.prev,
    }
    local action = args[1] and actions[args[1]]
    if args[1] and not action then
      util.notify(
        ("unknown suggest action %q; try toggle, accept, dismiss, next, prev"):format(args[1]),
        vim.log.levels.ERROR
      )
      return
    end
    (action or suggest.trigger)()
  end,
  model = function()
    require("pi-ide.suggest.models").pick()
  end,
  comment = function(_, command)
    local review = require("pi-ide.review")
    if command and command.range > 0 then
      review.comment_here(command.line1, command.line2)
    else
      review.comment_here()
    end
  end,
  review = function(args)
    local review = require("pi-ide.review")
    local what = args[1] or "status"
    if what == "submit" then
      review.submit()
    elseif what == "cancel" then
      review.cancel()
    elseif what == "status" then
      util.notify(review.describe())
    else
      util.notify(("unknown review action %q; try submit, cancel or status"):format(what), vim.log.levels.ERROR)
    end
  end,
  mcp = function(args)
    local mcp, problem = require("pi-ide.host").mcp()
    if not mcp then
      util.notify("MCP endpoint: " .. problem, vim.log.levels.WARN)
      return
    end
    if args[1] == "copy" then
      -- A wrapped message cannot be copied from the terminal in one piece.
      local command = M.claude_mcp_add(mcp.url, mcp.token)
      vim.fn.setreg('"', command)
      local clipboard = vim.fn.has("clipboard") == 1
      if clipboard then
        vim.fn.setreg("+", command)
      end
      util.notify(('the claude mcp add command is in register "%s'):format(clipboard and " and +" or ""))
      return
    elseif args[1] ~= nil then
      util.notify(("unknown mcp argument %q; try copy"):format(args[1]), vim.log.levels.ERROR)
      return
    end
    local lasting = mcp.token_file
        and ("The port is fixed and the token kept in %s: this keeps working after restarts."):format(mcp.token_file)
      or "The port and token change when Neovim restarts; set mcp = { port = N } to keep both."
    util.notify(table.concat({
      "MCP endpoint: " .. mcp.url,
      ("Claude Code (run in %s; adds it for this project):"):format(vim.fn.getcwd(-1, -1)),
      M.claude_mcp_add(mcp.url, mcp.token),
      lasting,
      ":PiIde mcp copy puts the command in a register.",
    }, "\n"))
  end,
  agent = function(args)
    local agent = require("pi-ide.agent")
    local what = args[1]
    if what == nil then
      agent.toggle()
    elseif what == "focus" then
      agent.focus()
    elseif vim.tbl_contains(agent.NAMES, what) then
      agent.focus(what)
    else
      util.notify(("unknown agent argument %q; try claude, pi or focus"):format(what), vim.log.levels.ERROR)
    end
  end,
}

local suggest_actions = { "accept", "dismiss", "next", "prev", "toggle" }
local agent_arguments = { "claude", "focus", "pi" }
local review_actions = { "cancel", "status", "submit" }

--- The shell command that adds this Neovim's MCP endpoint to Claude Code.
function M.claude_mcp_add(url, token)
  return ('claude mcp add --transport http nvim %s --header "Authorization: Bearer %s"'):format(url, token)
end

--- Runs `:PiIde {fargs}`; `command` is the user command's table (range).
function M.run(fargs, command)
  local name = fargs[1] or "status"
  local subcommand = subcommands[name]
  if not subcommand then
    util.notify(
      ("unknown subcommand %q; try one of: %s"):format(name, table.concat(M.names(), ", ")),
      vim.log.levels.ERROR
    )
    return
  end
  subcommand(vim.list_slice(fargs, 2), command)
end

function M.names()
  local names = vim.tbl_keys(subcommands)
  table.sort(names)
  return names
end

function M.complete(arglead, cmdline)
  local words = vim.split(vim.trim(cmdline), "%s+")
  local typing_first = #words == 1 or (#words == 2 and arglead ~= "")
  local candidates = {}
  if typing_first then
    candidates = M.names()
  elseif words[2] == "suggest" then
    candidates = suggest_actions
  elseif words[2] == "agent" then
    candidates = agent_arguments
  elseif words[2] == "review" then
    candidates = review_actions
  elseif words[2] == "mcp" then
    candidates = { "copy" }
  elseif words[2] == "accept" or words[2] == "reject" or words[2] == "diff" then
    if words[2] ~= "diff" then
      candidates[1] = "all"
    end
    for _, diff in ipairs(require("pi-ide.diff").list()) do
      candidates[#candidates + 1] = diff.tab_name
    end
  end
  return vim.tbl_filter(function(candidate)
    return vim.startswith(candidate, arglead)
  end, candidates)
end

return M
