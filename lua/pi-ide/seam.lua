-- The seam between this Lua code and the Rust host, in one place. The host
-- calls Lua only through M.call (via nvim_exec_lua); Lua tells the host
-- things only through M.notify. src/nvim/seam/ is the same seam seen from
-- the host.
local host = require("pi-ide.host")

local M = {}

-- The host reports its own in `started`; a mismatch means a stale binary.
M.VERSION = 25

-- Host → Lua: each forwards to the feature that handles it, loading it on
-- first use.
M.calls = {
  -- The host listens and its lockfile exists; a restarted host knows no
  -- diagnostics yet, so it gets all of them.
  started = function(info)
    if host.on_started(info) then
      require("pi-ide.diagnostics").send_all()
      -- Tools a config registered before this host started.
      if package.loaded["pi-ide.mcp"] then
        require("pi-ide.mcp").announce()
      end
    end
  end,
  -- An agent "connected", "initialized", "updated" or "disconnected";
  -- client = { id, kind, name, pid } (pid: the agent's process, from Claude).
  client = function(event, client)
    host.on_client(event, client)
  end,
  -- openDiff; an error makes the host answer DIFF_REJECTED. A large diff
  -- answers {original, proposed}, the buffers the host puts its lines in.
  open_diff = function(spec)
    return require("pi-ide.diff").open(spec)
  end,
  -- The agent closed diff `id`; `reason` says why when it was not the agent's
  -- choice; `taken`: the agent took the proposal, the person's edits included.
  close_diff = function(id, reason, taken)
    require("pi-ide.diff").close(id, reason, taken)
  end,
  -- Companion closeDiff: the proposal of diff `id` as the person left it, or nil.
  diff_text = function(id)
    return require("pi-ide.diff").text(id)
  end,
  -- A client initialized: where the person is.
  positions = function()
    return require("pi-ide.selection").positions()
  end,
  -- The answer to `suggest` request `token`.
  suggestions = function(token, list, err)
    require("pi-ide.suggest").on_result(token, list, err)
  end,
  -- The answer to `list_models`.
  models = function(result, err)
    require("pi-ide.suggest.models").on_models(result, err)
  end,
  -- Large diff `id` re-diffed after edit `seq`: its new hunks and words.
  diff_hunks = function(id, seq, hunks, words)
    require("pi-ide.diff.hunks").on_hunks(id, seq, hunks, words)
  end,
  -- A part of large diff `id`'s hunks, or "done" (its lines are in its
  -- buffers); false once the diff is gone (the host stops sending).
  diff_part = function(id, kind, first, a, b)
    return require("pi-ide.diff").part(id, kind, first, a, b)
  end,
  -- An agent asks for the workspace folder: the global cwd.
  workspace = function()
    return require("pi-ide.editors").workspace()
  end,
  -- MCP tools: { cwd, folders? }, the global cwd and the language servers'
  -- workspace folders (the roots a `projectPath` may name).
  project_roots = function()
    return require("pi-ide.mcp.roots").roots()
  end,
  -- getCurrentSelection: the current window's position, nil if not a file.
  current_positions = function()
    return require("pi-ide.selection").current()
  end,
  -- Selection context: a selection's rows, at most max_bytes of text.
  selected_rows = function(buf, first, last, max_bytes)
    return require("pi-ide.selection").rows(buf, first, last, max_bytes)
  end,
  -- openFile: show (or only load) a file and select text; an error fails it.
  open_file = function(request)
    return require("pi-ide.editors").open(request)
  end,
  -- getOpenEditors: the listed file buffers.
  open_editors = function()
    return require("pi-ide.editors").list()
  end,
  -- checkDocumentDirty: { modified } of the file's buffer, nil without one.
  document_state = function(path)
    return require("pi-ide.editors").state(path)
  end,
  -- saveDocument: writes the file's buffer while `path` still leads to
  -- `real`, the file the host checked; nil without one.
  save_document = function(path, real)
    return require("pi-ide.editors").save(path, real)
  end,
  -- MCP get_file_text_by_path: { lines } of the file's loaded buffer, nil
  -- without one.
  buffer_text = function(path)
    return require("pi-ide.editors").text(path)
  end,
  -- MCP LSP tools: starts { id, kind, path, line, character, text?, timeout_ms }
  -- and returns at once; the answer (hover markdown, or the servers' own
  -- responses with their encodings) follows as the `lsp_answer` event.
  lsp_request = function(query)
    require("pi-ide.mcp.lsp").request(query)
  end,
  -- MCP LSP tools: { {buf, path} }, the file buffers with unsaved edits.
  modified_buffers = function()
    return require("pi-ide.mcp.buffer_lines").modified()
  end,
  -- MCP LSP tools: the text of `rows` (0-based) of each { buf, rows }.
  buffer_lines = function(wanted)
    return require("pi-ide.mcp.buffer_lines").rows(wanted)
  end,
  -- MCP edit tools: starts { id, kind, path, ... } (format, rename,
  -- code_actions, apply_action) and returns at once; the answer (the
  -- server's WorkspaceEdit with its encoding, or code actions) follows as
  -- the `lsp_answer` event.
  lsp_edit = function(query)
    require("pi-ide.mcp.lsp_edits").request(query)
  end,
  -- MCP edits: puts an accepted (or unapproved) text into the file's
  -- buffer, writing it when asked; returns { ok, error?, written,
  -- no_buffer? } (no_buffer: the host writes the file itself). With
  -- edit.probe, only whether a buffer holds the file (no text sent).
  apply_edit = function(edit)
    return require("pi-ide.mcp.apply").apply(edit)
  end,
  -- MCP edits: an accepted edit of notice.path was not applied as it was
  -- (notice.why); notice.kept (lines) goes to a buffer of its own, returned.
  edit_notice = function(notice)
    return require("pi-ide.mcp.apply").notice(notice)
  end,
  -- pi's context socket is at `path` now (nil: nowhere), or `err` says why not.
  socket = function(path, err)
    host.on_socket(path, err)
  end,
  -- A socket client asks for a review: { id, root, files, heads } (files
  -- relative to root, checked; heads: file -> its lines at git HEAD, read
  -- by the host); an error makes the host answer "cancelled".
  review_open = function(review)
    return require("pi-ide.review").open(review)
  end,
  -- Review `id` ends without a result (its client left); `reason` says why.
  review_close = function(id, reason)
    require("pi-ide.review").close(id, reason)
  end,
  -- A review request was refused (answered "cancelled"): tell the person.
  review_refused = function(message)
    require("pi-ide.review").refused(message)
  end,
  -- MCP endpoint `endpoint` ("MCP", or a companion CLI's name) has `open`
  -- sessions now; :checkhealth shows them.
  sessions = function(endpoint, open)
    require("pi-ide.host").sessions(endpoint, open)
  end,
  -- An agent's request was refused (a path out of the project): tell the
  -- person why.
  refused = function(message)
    require("pi-ide.util").notify(message, vim.log.levels.WARN)
  end,
  -- Watched files changed on disk (`changed`) or went away (`gone`): the
  -- names `watch_files` sent, once per quiet period.
  files_changed = function(changed, gone)
    require("pi-ide.follow").on_changes(changed, gone)
  end,
  -- MCP: a tool the config registered is called ({id, name, arguments});
  -- its handler runs after this returns, its result follows as
  -- `tool_answer` ({text} or {table}).
  user_tool = function(call)
    require("pi-ide.mcp").call(call)
  end,
  -- MCP: what became of propose_edit `id` ({ok, text, structured?}).
  edit_decided = function(id, result)
    require("pi-ide.mcp").decided(id, result)
  end,
  -- `:PiIde changes` `id`: the files changed since the baseline, before
  -- their diffs open ({since, root, files = {{path, relative, change, note?}}, more}).
  changes_listed = function(id, listing)
    require("pi-ide.changes").listed(id, listing)
  end,
  -- What became of changes_start or changes_review `id`.
  changes_done = function(id, result)
    require("pi-ide.changes").done(id, result)
  end,
  -- MCP get_run_configurations: answered later as `tool_answer` `id`.
  run_configurations = function(id)
    require("pi-ide.mcp.run").configurations(id)
  end,
  -- MCP execute_run_configuration / execute_terminal_command: asks the
  -- person, runs in a terminal window; answered later as `tool_answer`.
  run_command = function(request)
    require("pi-ide.mcp.run").run(request)
  end,
  -- ACP chat `id`: what happened since the last call (one call a frame).
  chat_update = function(id, updates)
    require("pi-ide.chat").on_update(id, updates)
  end,
  -- An ACP agent asks permission {id, chat, tool_call, options}; answered
  -- by the `chat_permission` event.
  chat_permission = function(request)
    require("pi-ide.chat").on_permission(request)
  end,
  -- An ACP agent runs {id, chat, argv, env, cwd, limit} in a terminal
  -- buffer; an error says it could not start.
  chat_terminal = function(request)
    require("pi-ide.chat.terminal").create(request)
  end,
  -- {output, truncated}: the last `limit` bytes terminal `id` shows.
  chat_terminal_output = function(id)
    return require("pi-ide.chat.terminal").output(id)
  end,
  -- Stops terminal `id`'s command (`release`: the agent is done with it).
  chat_terminal_kill = function(id, release)
    require("pi-ide.chat.terminal").kill(id, release)
  end,
}

--- Runs the seam call `name`; the host's only way into Lua.
function M.call(name, ...)
  local call = M.calls[name]
  if not call then
    error("pi-ide: unknown seam call " .. tostring(name), 0)
  end
  return call(...)
end

-- Lua → host notifications, the only ones Lua sends.
M.EVENTS = {
  "selection", -- positions table: the cursor/selection of a file buffer, debounced
  "diff_decided", -- id, accepted, text?/reason?: the person decided on diff `id` (and why, when rejected)
  "diff_closed", -- id: the person closed diff `id` without deciding
  "cwd", -- dir, root: Neovim's global cwd changed, and its project root
  "suggest", -- request table: ask the pi agent for suggestions
  "suggest_cancel", -- token: the person moved on
  "list_models", -- :PiIde model
  "stop", -- clean up and exit
  "diagnostics_pending", -- diagnostics changed; the update follows shortly
  "diagnostics", -- files: the diagnostics of each changed buffer
  "mention", -- {filePath, lineStart?, lineEnd?}: an at-mention for Claude Code
  "diff_edited", -- id, seq, side, first, last, lines: a side of a large diff changed
  "no_file", -- debounced: the current window shows no file (help, a diff, …)
  "review_done", -- {id, status, comments}: the person submitted or cancelled review `id`
  "lsp_answer", -- {id, result?, error?, no_server?, filetype?}: the answer to lsp_request `id`
  "roots_changed", -- the cwd, a language server or its workspace folders changed
  "watch_files", -- paths: every file to watch on disk (loaded buffers', diffs')
  "file_written", -- path: Neovim wrote this watched file itself
  "tool_answer", -- {id, result?, error?}: the answer to user_tool, run_configurations or run_command `id`
  "tools_changed", -- tools: every MCP tool the config registered {name, description, input_schema}
  "propose_edit", -- {id, title?, files = {{path, text}}}: a config's tool proposes an edit
  "changes_start", -- {id, store, root?, keep?}: take a baseline of the project's files
  "changes_review", -- {id, store, root?}: review what changed since the baseline
  "chat", -- {op, chat, ...}: open, prompt, cancel, mode, config, auth or close an ACP chat
  "chat_permission", -- {id, option?}: the person's answer to an agent's permission request
  "chat_terminal_exit", -- {id, exit_code?, signal?}: an agent's terminal command ended
  "opencode_follow", -- {id, port, password, cwd, pid}: opencode (agent `id`, process `pid`) serves there
  "opencode_forget", -- id: that opencode exited
  "opencode_prompt", -- {id, text, submit}: `:PiIde ask` into opencode's prompt
}

local known = {}
for _, event in ipairs(M.EVENTS) do
  known[event] = true
end

--- Sends `event` to the host; false when the host is not running.
function M.notify(event, ...)
  if not known[event] then
    error("pi-ide: unknown seam event " .. tostring(event), 2)
  end
  local channel = host.channel()
  if not channel then
    return false
  end
  return pcall(vim.rpcnotify, channel, event, ...)
end

return M
