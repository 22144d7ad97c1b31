-- :PiIde subcommands and their completion.
local util = require("pi-ide.util")

local M = {}

local function agent_lines(lines)
  local agents = package.loaded["pi-ide.agent"]
  for _, agent in ipairs(agents and agents.list() or {}) do
    lines[#lines + 1] = ("agent terminal: %s (pid %s%s)"):format(
      agent.label,
      agent.pid or "?",
      agent.pane and (", tmux pane " .. agent.pane) or (agent.visible and "" or ", hidden: :PiIde agent")
    )
  end
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
  local names = { gemini = "Gemini CLI", qwen = "Qwen Code" }
  for _, announced in ipairs(status.companions or {}) do
    lines[#lines + 1] = ("%s: 127.0.0.1:%d, announced in %s"):format(
      names[announced.client] or announced.client,
      announced.port,
      announced.file
    )
  end
  if status.companion_error then
    lines[#lines + 1] = "Gemini CLI / Qwen Code: " .. status.companion_error
  end
  if status.codex then
    lines[#lines + 1] = ("Codex CLI (/ide): %s; TMPDIR=%s codex reaches it"):format(
      status.codex.socket,
      status.codex.tmpdir
    )
    lines[#lines + 1] = status.codex.shared and ("Codex CLI (/ide), shared: " .. status.codex.shared)
      or ("Codex CLI (/ide), shared place: not served: " .. (status.codex.shared_note or "?"))
  elseif status.codex_error then
    lines[#lines + 1] = "Codex CLI (/ide): " .. status.codex_error
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
    lines[#lines + 1] = "clients: none (run /ide in pi, claude --ide, or /ide enable in gemini or qwen)"
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
  agent_lines(lines)
  local changes = package.loaded["pi-ide.changes"]
  local since = changes and changes.status().since
  if since then
    lines[#lines + 1] = ("changes followed since %s (:PiIde changes)"):format(os.date("%H:%M", since))
  end
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
    -- The log path links to the current day's file; open that file itself.
    vim.cmd("tabedit " .. vim.fn.fnameescape(vim.fn.resolve(require("pi-ide.host").log_path())))
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
  disk = function()
    require("pi-ide.follow.compare").show()
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
      status = suggest.explain,
    }
    local action = args[1] and actions[args[1]]
    if args[1] and not action then
      util.notify(
        ("unknown suggest action %q; try toggle, accept, dismiss, next, prev, status"):format(args[1]),
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
    local claude = M.claude_mcp_add(mcp)
    local codex, codex_run = M.codex_mcp_add(mcp)
    if args[1] == "copy" and (args[2] == nil or args[2] == "claude" or args[2] == "codex") then
      -- A wrapped message cannot be copied from the terminal in one piece.
      -- The commands read the token when they run: none goes into a register.
      local which = args[2] or "claude"
      local command = which == "codex" and codex or claude
      vim.fn.setreg('"', command)
      local clipboard = vim.fn.has("clipboard") == 1
      if clipboard then
        vim.fn.setreg("+", command)
      end
      util.notify(('the %s mcp add command is in register "%s'):format(which, clipboard and " and +" or ""))
      return
    elseif args[1] ~= nil then
      util.notify(("unknown mcp argument %q; try copy, copy codex"):format(args[1]), vim.log.levels.ERROR)
      return
    end
    local lasting = mcp.token_file
        and ("The port is fixed and the token kept in %s: this keeps working after restarts."):format(mcp.token_file)
      or "The port and token change when Neovim restarts; set mcp = { port = N } to keep both."
    util.notify(table.concat({
      "MCP endpoint: " .. mcp.url,
      "pi (pi/nvim.ts, in pi started in this project): /nvim connect " .. mcp.url,
      ("Claude Code (run in %s; adds it for this project; the token is read when it runs):"):format(
        vim.fn.getcwd(-1, -1)
      ),
      claude,
      "Codex CLI (adds it for every project; Codex reads the token from $PI_IDE_MCP_TOKEN when it runs):",
      codex,
      "then start Codex with " .. codex_run .. " (:PiIde agent codex sets it)",
      lasting,
      ":PiIde mcp copy puts the claude command in a register, :PiIde mcp copy codex the codex one.",
    }, "\n"))
  end,
  -- `:PiIde agent [name [args…]]`, `agent new [name [args…]]`, `agent focus`.
  agent = function(args)
    local agent = require("pi-ide.agent")
    local what = args[1]
    if what == nil then
      agent.toggle()
    elseif what == "focus" then
      agent.focus()
    elseif what == "new" then
      agent.new(args[2], vim.list_slice(args, 3))
    elseif vim.tbl_contains(agent.names(), what) then
      agent.focus(what, vim.list_slice(args, 2))
    else
      util.notify(
        ("unknown agent %q; try %s, new or focus"):format(what, table.concat(agent.names(), ", ")),
        vim.log.levels.ERROR
      )
    end
  end,
  -- `:PiIde changes`: review what changed since the baseline; `changes
  -- start`: take a new baseline.
  changes = function(args)
    local changes = require("pi-ide.changes")
    if args[1] == nil then
      changes.review()
    elseif args[1] == "start" then
      changes.start()
    else
      util.notify(("unknown changes action %q; try start"):format(args[1]), vim.log.levels.ERROR)
    end
  end,
  -- `:PiIde chat [agent|new [agent]|pick|mode|permission|cancel|close|auth|resume]`,
  -- `:[range]PiIde chat add`: the lines as a mention in the prompt.
  chat = function(args, command)
    require("pi-ide.chat.command").run(args, command)
  end,
  -- `:[range]PiIde ask [text]`: into the agent's input, lines as a mention.
  ask = function(_, command)
    local text = command and command.args and command.args:gsub("^%s*ask%s?", "") or ""
    local buf = vim.api.nvim_get_current_buf()
    if command and command.range > 0 then
      require("pi-ide.agent.ask").ask(text, buf, command.line1, command.line2)
    else
      require("pi-ide.agent.ask").ask(text, buf)
    end
  end,
}

local suggest_actions = { "accept", "dismiss", "next", "prev", "status", "toggle" }
local review_actions = { "cancel", "status", "submit" }

--- The shell command that adds this Neovim's MCP endpoint to Claude Code.
--- It reads the bearer token when it runs (from the kept token file, else
--- the lockfile, with jq), so the token itself is never shown or copied.
---@param mcp { url: string, lockfile: string, token_file?: string }
---@return string
function M.claude_mcp_add(mcp)
  local read = mcp.token_file and ("cat %s"):format(vim.fn.shellescape(mcp.token_file))
    or ("jq -r .authToken %s"):format(vim.fn.shellescape(mcp.lockfile))
  return ('claude mcp add --transport http nvim %s --header "Authorization: Bearer $(%s)"'):format(mcp.url, read)
end

--- The shell command that adds this Neovim's MCP endpoint to Codex CLI,
--- and how to start Codex with the token. Codex keeps the name of an
--- environment variable, not the token: it reads the token from
--- `$PI_IDE_MCP_TOKEN` each time it runs; the second string sets that
--- variable from the kept token file, else the lockfile (with jq).
---@param mcp { url: string, lockfile: string, token_file?: string }
---@return string add, string run
function M.codex_mcp_add(mcp)
  local read = mcp.token_file and ("cat %s"):format(vim.fn.shellescape(mcp.token_file))
    or ("jq -r .authToken %s"):format(vim.fn.shellescape(mcp.lockfile))
  local add = ("codex mcp add nvim --url %s --bearer-token-env-var PI_IDE_MCP_TOKEN"):format(mcp.url)
  return add, ('PI_IDE_MCP_TOKEN="$(%s)" codex'):format(read)
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
    local position = #words - (arglead == "" and 0 or 1)
    if position == 2 then
      candidates = vim.list_extend({ "focus", "new" }, require("pi-ide.agent").names())
    elseif position == 3 and words[3] == "new" then
      candidates = require("pi-ide.agent").names()
    end
  elseif words[2] == "chat" then
    local position = #words - (arglead == "" and 0 or 1)
    if position == 2 then
      candidates = require("pi-ide.chat.command").words()
    elseif position == 3 and words[3] == "new" then
      candidates = require("pi-ide.chat.agents").names()
    end
  elseif words[2] == "review" then
    candidates = review_actions
  elseif words[2] == "mcp" then
    candidates = { "copy" }
  elseif words[2] == "changes" then
    candidates = { "start" }
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
