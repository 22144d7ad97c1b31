-- Options: defaults, validation and the merged result other modules read.
-- The classes below give `setup()`'s options completion and checking in
-- lua-language-server (lazy.nvim: `---@type pi-ide.Config` above `opts`).

---@alias pi-ide.Key string|false A key (`<leader>aa`), or false for none.

---@class pi-ide.Config
---@field auto_start? boolean Start the host after VimEnter (default true).
---@field bin? string Host binary; nil = the newest of target/release and target/debug in the plugin.
---@field lock_dir? string Lockfile directory; nil = $PI_IDE_LOCK_DIR or ~/.pi/ide.
---@field log_level? "error"|"warn"|"info"|"debug"|"trace" Host log level (default "info").
---@field claude_code? boolean Announce Neovim to Claude Code too (default true).
---@field gemini? boolean Serve Gemini CLI's IDE mode, announced in <tmpdir>/gemini/ide (default true).
---@field qwen? boolean Serve Qwen Code's IDE mode, announced in $QWEN_HOME/ide (default true).
---@field codex? boolean Serve Codex CLI's `/ide` socket, <tmpdir>/codex-ipc/ipc-<uid>.sock (default true).
---@field watch_files? boolean Buffers follow their files on disk (default true).
---@field context_socket? pi-ide.Config.ContextSocket pi's context socket.
---@field mcp? pi-ide.Config.Mcp The Streamable-HTTP MCP endpoint.
---@field selection? pi-ide.Config.Selection Sending the cursor/selection to agents.
---@field diff? pi-ide.Config.Diff Diff tabs agents open.
---@field suggestion? pi-ide.Config.Suggestion Inline suggestions from pi.
---@field review? pi-ide.Config.Review Reviews pi asks for.
---@field agent? pi-ide.Config.Agent `:PiIde agent` terminals.
---@field acp? pi-ide.Config.Acp `:PiIde chat`: agents spoken to over the Agent Client Protocol.

---@class pi-ide.Config.Acp
---@field default? string The agent `:PiIde chat` starts (default "gemini").
---@field agents? table<string, pi-ide.Config.AcpAgent> Agents of your own, or changes to the built-in ones.

---@class pi-ide.Config.AcpAgent
---@field cmd string[] The agent's argv (no shell).
---@field env? table<string, string> Added to its environment.

---@class pi-ide.Config.ContextSocket
---@field enabled? boolean (default true)
---@field name? string The socket's file name (default "nvim").

---@class pi-ide.Config.Mcp
---@field enabled? boolean (default true)
---@field port? integer 0 = any free port; a fixed port keeps its token (default 0).
---@field approve_edits? boolean Show every MCP edit as a diff to accept or reject (default true).
---@field session_idle_minutes? number Close a session idle this long with no stream open; 0 = never (default 240).
---@field terminal_commands? boolean Offer `execute_terminal_command` (still asked each time; default true).

---@class pi-ide.Config.Selection
---@field enabled? boolean Send selection_changed to agents (default true).
---@field debounce_ms? integer Quiet period before it is sent (default 100).

---@class pi-ide.Config.Diff
---@field focus? "auto"|"always"|"never" Whether a new diff takes the cursor (default "auto").
---@field keymaps? pi-ide.Config.DiffKeymaps|false Keys in diff windows; false: none.

---@class pi-ide.Config.DiffKeymaps
---@field accept? pi-ide.Key
---@field reject? pi-ide.Key
---@field hunk_accept? pi-ide.Key
---@field hunk_reject? pi-ide.Key
---@field accept_all? pi-ide.Key Every file of a multi-file edit.
---@field reject_all? pi-ide.Key

---@class pi-ide.Config.Suggestion
---@field enabled? boolean (default true)
---@field auto_trigger? boolean Ask while typing (default true).
---@field debounce_ms? integer (default 150)
---@field count? 1|2|3 Alternatives asked for (default 3).
---@field lines_before? integer Lines sent before the cursor (default 20).
---@field lines_after? integer Lines sent after the cursor (default 10).
---@field model? string "provider/id" unless chosen with :PiIde model.
---@field filetypes? table<string, boolean> Per-filetype switch.
---@field max_file_size? integer No suggestions in larger buffers (bytes).
---@field should_attach? fun(buf: integer): boolean False keeps suggestions out of that buffer.
---@field keymaps? pi-ide.Config.SuggestionKeymaps|false Insert-mode keys; false: none.

---@class pi-ide.Config.SuggestionKeymaps
---@field accept? pi-ide.Key
---@field accept_word? pi-ide.Key
---@field accept_line? pi-ide.Key
---@field next? pi-ide.Key
---@field prev? pi-ide.Key
---@field dismiss? pi-ide.Key
---@field trigger? pi-ide.Key

---@class pi-ide.Config.Review
---@field keymaps? pi-ide.Config.ReviewKeymaps|false Keys in a review's files; false: none.

---@class pi-ide.Config.ReviewKeymaps
---@field next? pi-ide.Key
---@field prev? pi-ide.Key
---@field next_file? pi-ide.Key
---@field prev_file? pi-ide.Key

---@class pi-ide.Config.AgentCommand
---@field cmd string[]|string A list (run as is) or a string (run by 'shell').

---@class pi-ide.Config.AgentPi: pi-ide.Config.AgentCommand
---@field extensions? { review?: boolean, nvim?: boolean } This plugin's pi extensions.

---@class pi-ide.Config.AgentCodex: pi-ide.Config.AgentCommand
---@field review_patches? boolean Pass Codex the hook that shows each apply_patch in Neovim's review (default true).

---@class pi-ide.Config.AgentOpencode: pi-ide.Config.AgentCommand
---@field review_edits? boolean Start opencode with edits set to ask, and ask in Neovim's review (default true).

---@class pi-ide.Config.OwnAgent: pi-ide.Config.AgentCommand
---@field kind? "claude"|"pi"|"gemini"|"qwen"|"codex"|"opencode" Wired like that one (default: from the program's name).
---@field env? table<string, string>

---@class pi-ide.Config.Agent
---@field default? string A built-in agent ("claude", "pi", "gemini", …) or a name in `agents` (default "claude").
---@field claude? pi-ide.Config.AgentCommand
---@field gemini? pi-ide.Config.AgentCommand
---@field qwen? pi-ide.Config.AgentCommand
---@field codex? pi-ide.Config.AgentCodex
---@field opencode? pi-ide.Config.AgentOpencode
---@field pi? pi-ide.Config.AgentPi
---@field agents? table<string, pi-ide.Config.OwnAgent> More agents.
---@field baseline? boolean Take a baseline of the project as an agent starts, for `:PiIde changes` (default true).
---@field position? "right"|"left"|"bottom"|"top"|"float"|"tmux" Where its terminal opens (default "right").
---@field size? number Fraction of the editor (up to 1), or columns / lines (default 0.4).
---@field focus_after_diff? boolean Go back to the agent after deciding its diff (default true).

local M = {}

---@type pi-ide.Config
M.defaults = {
  -- Start the host after VimEnter.
  auto_start = true,
  -- Host binary; nil = the newest of bin/ (downloaded by :PiIde install),
  -- target/release and target/debug in the plugin.
  bin = nil,
  -- Where :PiIde install downloads release binaries from
  -- (<release_url>/v<version>/pi-ide-<target>); nil = $PI_IDE_RELEASE_URL,
  -- else the GitHub releases of the repository the plugin was cloned from.
  release_url = nil,
  -- Lockfile directory; nil = $PI_IDE_LOCK_DIR or ~/.pi/ide.
  lock_dir = nil,
  -- Host log level: "error", "warn", "info", "debug" or "trace".
  log_level = "info",
  -- Announce Neovim to Claude Code too ($CLAUDE_CONFIG_DIR/ide or ~/.claude/ide).
  claude_code = true,
  -- Serve Gemini CLI's IDE mode (context, diffs in Neovim), announced in
  -- <tmpdir>/gemini/ide ($TMPDIR, else /tmp).
  gemini = true,
  -- Serve Qwen Code's IDE mode, announced in $QWEN_HOME/ide (~/.qwen/ide).
  qwen = true,
  -- Serve Codex CLI's `/ide` (the current file and selection before each
  -- prompt) on <tmpdir>/codex-ipc/ipc-<uid>.sock when nobody else does,
  -- and always on the one `:PiIde agent codex` points Codex to.
  codex = true,
  -- Buffers follow their files on disk: one without unsaved edits takes a
  -- change made by anyone else at once (one undo step); one with unsaved
  -- edits is kept and you are told (:PiIde disk compares).
  watch_files = true,
  -- pi's context socket, <project root>/.pi/ide/<name>.sock: pi's `ide`
  -- extension reads the current file and selection from it and asks for
  -- reviews. The project root is the git root of the cwd, else the cwd.
  context_socket = {
    enabled = true,
    -- The socket's file name (pi shows it); `<name>-<pid>` when another
    -- Neovim in the same project has it.
    name = "nvim",
  },
  -- Streamable-HTTP MCP endpoint http://127.0.0.1:<port>/mcp for any MCP
  -- client (`:PiIde mcp`); the bearer token is the lockfile's authToken.
  mcp = {
    enabled = true,
    -- 0 = any free port, with a new URL and token each start. A fixed port
    -- keeps its token in stdpath("state")/pi-ide/mcp-token, so a client
    -- configured once keeps working.
    port = 0,
    -- Show every edit an MCP tool makes as a diff to accept or reject;
    -- false: edits go straight into the buffers (undoable, not saved).
    approve_edits = true,
    -- Close a session after this many minutes without a request or an open
    -- stream; 0 = only when the cap (64 sessions) needs its place.
    session_idle_minutes = 240,
    -- Offer execute_terminal_command: an agent's shell command, run in a
    -- visible terminal once you approve it (every time). false: not offered.
    terminal_commands = true,
  },
  selection = {
    -- Send selection_changed to connected agents.
    enabled = true,
    -- Quiet period before the cursor/selection is sent.
    debounce_ms = 100,
  },
  diff = {
    -- Whether a new diff takes the cursor: "auto" = only when you are in
    -- Normal mode in a file with no keys pending (never while you type or
    -- sit in a terminal), "always", or "never" (:PiIde diff jumps to it).
    focus = "auto",
    -- Buffer-local keys in the diff's windows; false disables them all.
    keymaps = {
      accept = "<leader>aa",
      reject = "<leader>ad",
      -- The hunk under the cursor.
      hunk_accept = "ga",
      hunk_reject = "gr",
      -- Every file of a multi-file edit (an MCP rename).
      accept_all = "<leader>aA",
      reject_all = "<leader>aD",
    },
  },
  suggestion = {
    -- Inline ghost-text suggestions from the connected pi agent.
    enabled = true,
    -- Ask while typing (after the debounce); false = only on demand.
    auto_trigger = true,
    debounce_ms = 150,
    -- Alternatives asked for (at most 3).
    count = 3,
    -- Lines of text sent before and after the cursor.
    lines_before = 20,
    lines_after = 10,
    -- "provider/id" to use unless chosen with :PiIde model.
    model = nil,
    -- Per-filetype switch; filetypes not listed follow `enabled`.
    filetypes = { gitcommit = false, help = false },
    -- No suggestions in buffers larger than this (bytes).
    max_file_size = 1024 * 1024,
    -- function(buf) returning false keeps suggestions out of that buffer
    -- (vim.b.pi_ide_suggestion = false does it for one buffer).
    should_attach = nil,
    -- Insert-mode keys; false disables them all, or one of them.
    keymaps = {
      accept = "<Tab>",
      accept_word = "<M-Right>",
      accept_line = "<M-C-Right>",
      next = "<M-]>",
      prev = "<M-[>",
      dismiss = "<C-]>",
      trigger = "<M-\\>",
    },
  },
  review = {
    -- Buffer-local keys in a review's files; false disables them all, or
    -- one of them.
    keymaps = {
      -- The next / previous comment in the file.
      next = "]r",
      prev = "[r",
      -- The next / previous file of the review.
      next_file = "]f",
      prev_file = "[f",
    },
  },
  agent = {
    -- The agent `:PiIde agent` starts: "claude", "pi", "gemini", "qwen", "codex", "opencode" or one of `agents`.
    default = "claude",
    -- Each agent's command: a list (run as is) or a string (run by 'shell').
    claude = { cmd = { "claude" } },
    -- Gemini CLI and Qwen Code, told which Neovim (and port) to connect to.
    gemini = { cmd = { "gemini" } },
    qwen = { cmd = { "qwen" } },
    -- Codex CLI, with TMPDIR leading its `/ide` to this Neovim and (with
    -- review_patches) a PreToolUse hook that shows each apply_patch in
    -- Neovim's review; trust it once in Codex's /hooks.
    codex = { cmd = { "codex" }, review_patches = true },
    -- opencode, with (review_edits) its server on a port of its own and
    -- edits set to ask: each edit opens in Neovim's review.
    opencode = { cmd = { "opencode" }, review_edits = true },
    pi = {
      cmd = { "pi" },
      -- This plugin's pi extensions, loaded with `pi -e`: /review
      -- (pi/review.ts), and Neovim's language tools (pi/nvim.ts, connected
      -- to this Neovim at start).
      extensions = { review = true, nvim = true },
    },
    -- More agents: name = { cmd = …, kind = "claude" | "pi" | "gemini" | "qwen" | "codex" | "opencode" (wired like
    -- that one; default from the program's name), env = { … } }.
    agents = {},
    -- Where its terminal opens: "right", "left", "bottom", "top", "float",
    -- or "tmux" (a tmux pane beside Neovim's, when Neovim runs in tmux).
    position = "right",
    -- Fraction of the editor (up to 1), or columns / lines when above 1.
    size = 0.4,
    -- After you decide a diff an agent terminal proposed, go back to it.
    focus_after_diff = true,
    -- Take a baseline of the project's files as an agent starts: `:PiIde
    -- changes` then shows every file changed since, whoever changed it.
    baseline = true,
  },
  acp = {
    -- The agent `:PiIde chat` starts: gemini, qwen, opencode, claude, codex,
    -- pi, or one of `agents`.
    default = "gemini",
    -- name = { cmd = { argv… }, env = { … } }: agents of your own, or a
    -- built-in one's command replaced.
    agents = {},
  },
}

-- Type each option must have; options that default to nil name theirs here.
local types = {
  bin = "string",
  release_url = "string",
  lock_dir = "string",
  ["diff.keymaps"] = { "table", "boolean" },
  ["diff.keymaps.accept"] = { "string", "boolean" },
  ["diff.keymaps.reject"] = { "string", "boolean" },
  ["diff.keymaps.hunk_accept"] = { "string", "boolean" },
  ["diff.keymaps.hunk_reject"] = { "string", "boolean" },
  ["diff.keymaps.accept_all"] = { "string", "boolean" },
  ["diff.keymaps.reject_all"] = { "string", "boolean" },
  ["suggestion.model"] = "string",
  ["suggestion.should_attach"] = "function",
  ["suggestion.keymaps"] = { "table", "boolean" },
  ["review.keymaps"] = { "table", "boolean" },
}
-- Options replaced as a whole rather than merged key by key.
local commands = {
  ["agent.claude.cmd"] = true,
  ["agent.pi.cmd"] = true,
  ["agent.gemini.cmd"] = true,
  ["agent.qwen.cmd"] = true,
  ["agent.codex.cmd"] = true,
  ["agent.opencode.cmd"] = true,
}
for name in pairs(commands) do
  types[name] = { "table", "string" }
end
for _, key in ipairs({ "next", "prev", "next_file", "prev_file" }) do
  types["review.keymaps." .. key] = { "string", "boolean" }
end
for _, key in ipairs({ "accept", "accept_word", "accept_line", "next", "prev", "dismiss", "trigger" }) do
  types["suggestion.keymaps." .. key] = { "string", "boolean" }
end

local log_levels = { error = true, warn = true, info = true, debug = true, trace = true }
local focus_modes = { auto = true, always = true, never = true }
local agents = { claude = true, pi = true, gemini = true, qwen = true, codex = true, opencode = true }
local positions = { right = true, left = true, bottom = true, top = true, float = true, tmux = true }
-- Words `:PiIde agent` takes itself.
local agent_words = { new = true, focus = true }

-- One entry of option `agent.agents`: the entry to keep, or nil and why not.
local function own_agent(name, value)
  if type(name) ~= "string" or not name:match("^[%w_.-]+$") or agent_words[name] then
    return nil,
      ("option `agent.agents`: %q is not a usable agent name (letters, digits, `_`, `.`, `-`)"):format(tostring(name))
  end
  local prefix = "option `agent.agents." .. name
  if type(value) ~= "table" then
    return nil, prefix .. "` must be a table with a cmd"
  end
  if value.cmd == nil or (type(value.cmd) ~= "table" and type(value.cmd) ~= "string") then
    return nil, prefix .. ".cmd` must be a list of strings or a string naming a program"
  end
  if value.kind ~= nil and not agents[value.kind] then
    return nil, prefix .. '.kind` must be "claude", "pi", "gemini", "qwen", "codex" or "opencode"'
  end
  if value.env ~= nil and type(value.env) ~= "table" then
    return nil, prefix .. ".env` must be a table of strings"
  end
  return { cmd = vim.deepcopy(value.cmd), kind = value.kind, env = value.env and vim.deepcopy(value.env) }
end

-- A command is a non-empty list of strings (the first naming a program) or
-- a string with something in it.
local function valid_command(value)
  if type(value) == "string" then
    return vim.trim(value) ~= ""
  end
  if #value == 0 or not vim.islist(value) or value[1] == "" then
    return false
  end
  for _, word in ipairs(value) do
    if type(word) ~= "string" then
      return false
    end
  end
  return true
end

-- One entry of option `acp.agents`: the entry to keep, or nil and why not.
local function acp_agent(name, value)
  local prefix = "option `acp.agents." .. tostring(name)
  if type(name) ~= "string" or not name:match("^[%w_.-]+$") then
    return nil, ("option `acp.agents`: %q is not a usable agent name"):format(tostring(name))
  end
  if type(value) ~= "table" or type(value.cmd) ~= "table" or not valid_command(value.cmd) then
    return nil, prefix .. ".cmd` must be a list of strings (the agent's argv)"
  end
  if value.env ~= nil and type(value.env) ~= "table" then
    return nil, prefix .. ".env` must be a table of strings"
  end
  for env_name, env_value in pairs(value.env or {}) do
    if type(env_name) ~= "string" or type(env_value) ~= "string" then
      return nil, prefix .. ".env` must be a table of strings"
    end
  end
  return { cmd = vim.deepcopy(value.cmd), env = value.env and vim.deepcopy(value.env) }
end

-- Options that are tables of agents, each entry checked on its own.
local agent_tables = {
  ["agent.agents"] = function(agent, spec)
    local kept, problem = own_agent(agent, spec)
    if kept and not valid_command(kept.cmd) then
      return nil, ("option `agent.agents.%s.cmd` must name a program"):format(agent)
    end
    return kept, problem
  end,
  ["acp.agents"] = acp_agent,
}

local function accepts(expected, value)
  expected = type(expected) == "table" and expected or { expected }
  return vim.tbl_contains(expected, type(value)), table.concat(expected, " or ")
end

-- Copies valid values of `given` over `defaults`, reporting the rest.
local function merge(defaults, given, prefix, problems)
  local result = vim.deepcopy(defaults)
  for key, value in pairs(given) do
    local name = prefix .. tostring(key)
    local default = defaults[key]
    local expected = types[name] or (default ~= nil and type(default)) or nil
    if expected == nil then
      problems[#problems + 1] = ("unknown option `%s` (ignored)"):format(name)
    else
      local ok, wanted = accepts(expected, value)
      if not ok then
        problems[#problems + 1] = ("option `%s` must be a %s, got %s (using the default)"):format(
          name,
          wanted,
          type(value)
        )
      elseif name == "suggestion.filetypes" then
        -- Any filetype may be named; each maps to a boolean.
        for filetype, on in pairs(value) do
          if type(on) == "boolean" then
            result[key][filetype] = on
          else
            problems[#problems + 1] = ("option `%s.%s` must be a boolean (ignored)"):format(name, filetype)
          end
        end
      elseif agent_tables[name] then
        for agent, spec in pairs(value) do
          local kept, problem = agent_tables[name](agent, spec)
          if kept then
            result[key][agent] = kept
          else
            problems[#problems + 1] = problem .. " (ignored)"
          end
        end
      elseif commands[name] then
        if valid_command(value) then
          result[key] = vim.deepcopy(value)
        else
          local shape = "a list of strings or a string naming a program"
          problems[#problems + 1] = ("option `%s` must be %s (using the default)"):format(name, shape)
        end
      elseif type(value) == "table" and type(default) == "table" then
        result[key] = merge(default, value, name .. ".", problems)
      else
        result[key] = value
      end
    end
  end
  return result
end

---@type pi-ide.Config
M.values = vim.deepcopy(M.defaults)

--- Merges `opts` over the defaults; never throws, reports bad keys instead.
---@param opts? pi-ide.Config
---@return pi-ide.Config values, string[] problems
function M.apply(opts)
  local problems = {}
  if opts ~= nil and type(opts) ~= "table" then
    problems[1] = ("setup() takes a table, got %s (using the defaults)"):format(type(opts))
    opts = {}
  end
  local values = merge(M.defaults, opts or {}, "", problems)
  if not log_levels[values.log_level] then
    problems[#problems + 1] = ("option `log_level` must be one of error, warn, info, debug, trace (got %q)"):format(
      tostring(values.log_level)
    )
    values.log_level = M.defaults.log_level
  end
  if not focus_modes[values.diff.focus] then
    problems[#problems + 1] = ("option `diff.focus` must be one of auto, always, never (got %q)"):format(
      tostring(values.diff.focus)
    )
    values.diff.focus = M.defaults.diff.focus
  end
  local count = values.suggestion.count
  if count < 1 or count > 3 or count % 1 ~= 0 then
    problems[#problems + 1] = "option `suggestion.count` must be 1, 2 or 3 (using 3)"
    values.suggestion.count = 3
  end
  local socket_name = values.context_socket.name
  if socket_name == "" or socket_name:sub(1, 1) == "." or socket_name:find("[^%w._-]") then
    problems[#problems + 1] = ("option `context_socket.name` must be letters, digits, `.`, `_` or `-` (got %q)"):format(
      socket_name
    )
    values.context_socket.name = M.defaults.context_socket.name
  end
  local port = values.mcp.port
  if port ~= port or port < 0 or port > 65535 or port % 1 ~= 0 then
    problems[#problems + 1] = ("option `mcp.port` must be a whole number from 0 to 65535 (got %s; using 0)"):format(
      tostring(port)
    )
    values.mcp.port = M.defaults.mcp.port
  end
  local idle = values.mcp.session_idle_minutes
  if idle ~= idle or idle < 0 or idle == math.huge then
    local bad = "option `mcp.session_idle_minutes` must be 0 (never) or more (got %s; using 240)"
    problems[#problems + 1] = bad:format(tostring(idle))
    values.mcp.session_idle_minutes = M.defaults.mcp.session_idle_minutes
  end
  if values.selection.debounce_ms < 0 then
    problems[#problems + 1] = "option `selection.debounce_ms` must not be negative (using the default)"
    values.selection.debounce_ms = M.defaults.selection.debounce_ms
  end
  local agent = values.agent
  if not agents[agent.default] and not agent.agents[agent.default] then
    local wanted = "claude, pi, gemini, qwen, codex, opencode or a name in agent.agents"
    problems[#problems + 1] = ("option `agent.default` must be %s (got %q)"):format(wanted, tostring(agent.default))
    agent.default = M.defaults.agent.default
  end
  if not positions[agent.position] then
    problems[#problems + 1] = ("option `agent.position` must be one of %s (got %q)"):format(
      "right, left, bottom, top, float, tmux",
      tostring(agent.position)
    )
    agent.position = M.defaults.agent.position
  end
  if agent.size <= 0 then
    problems[#problems + 1] = "option `agent.size` must be above 0 (using the default)"
    agent.size = M.defaults.agent.size
  end
  if #problems > 0 then
    require("pi-ide.util").notify(table.concat(problems, "\n"), vim.log.levels.WARN)
  end
  M.values = values
  return values, problems
end

return M
