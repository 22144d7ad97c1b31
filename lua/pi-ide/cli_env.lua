-- The environment variables that point Gemini CLI and Qwen Code at this
-- Neovim. A CLI started in Neovim's `:terminal` walks its process tree to
-- Neovim's parent, not Neovim, and then takes whichever discovery file
-- matches its workspace, another editor's as likely as ours. So while the
-- host serves them, they are set in Neovim's own environment: every process
-- Neovim starts (`:terminal`, `:!`, jobstart(), vim.system()) inherits them.
-- No token is among them: the CLIs read it from the discovery file (0600).
-- CLAUDE_CODE_SSE_PORT is not either: other CLIs read it too and would then
-- connect without a token; only Claude's agent terminal gets it. While the
-- host announces Neovim in Claude Code's lockfiles, that variable and
-- OPENCODE_EDITOR_SSE_PORT are even taken out of Neovim's environment (an
-- editor whose terminal Neovim runs in may have set them): opencode dials
-- the port either names without a token, which only a lockfile gives it,
-- and Claude Code would dial that other editor; without them both find
-- this Neovim by its lockfile.
local M = {}

local NAMES = { "GEMINI_CLI_IDE_PID", "GEMINI_CLI_IDE_SERVER_PORT", "QWEN_CODE_IDE_SERVER_PORT" }

-- Taken out of Neovim's environment while Neovim is in Claude's lockfiles.
local WITHHELD = { "CLAUDE_CODE_SSE_PORT", "OPENCODE_EDITOR_SSE_PORT" }
-- Their values as inherited, while withheld.
local withheld = {}

-- What Neovim had before we set a variable (false: unset), so stopping
-- gives back what it inherited, e.g. from another editor's terminal.
local inherited = {}
-- What we set, to leave alone a value someone else set since.
local ours = {}

--- The port the host serves CLI `client` ("gemini" or "qwen") on, or nil.
local function port_of(status, client)
  for _, announced in ipairs(status.companions or {}) do
    if announced.client == client then
      return tostring(announced.port)
    end
  end
  return nil
end

--- The variables that make CLI `client` ("gemini" or "qwen") connect to
--- this Neovim, from the host's `status` (empty when it does not serve it).
---@param client "gemini"|"qwen"
---@param status pi-ide.Status
---@return table<string, string>
function M.for_client(client, status)
  local port = port_of(status, client)
  if not port then
    return {}
  end
  if client == "gemini" then
    -- The PID picks our discovery file, the port breaks a tie between files.
    return { GEMINI_CLI_IDE_PID = tostring(vim.fn.getpid()), GEMINI_CLI_IDE_SERVER_PORT = port }
  end
  return { QWEN_CODE_IDE_SERVER_PORT = port }
end

--- Every variable for both CLIs from `status`.
---@param status pi-ide.Status
---@return table<string, string>
function M.all(status)
  return vim.tbl_extend("force", M.for_client("gemini", status), M.for_client("qwen", status))
end

--- Sets Neovim's environment to point at the host `status` describes:
--- the variables of the CLIs it serves set, the others given back.
---@param status pi-ide.Status
function M.export(status)
  local wanted = M.all(status)
  for _, name in ipairs(NAMES) do
    local value = wanted[name]
    if value then
      if ours[name] == nil or vim.env[name] ~= ours[name] then
        inherited[name] = vim.env[name] or false
      end
      vim.env[name] = value
      ours[name] = value
    end
  end
  M.withdraw(wanted)
  if status.claude_lockfile then
    for _, name in ipairs(WITHHELD) do
      local value = vim.env[name]
      if value ~= nil and value ~= "" then
        withheld[name] = value
        vim.env[name] = nil
      end
    end
  end
end

--- Gives back what Neovim had before, for every variable we set (but those
--- in `keep`) that nobody changed since; without `keep` (the host
--- stopped), the withheld ones too, unless set again since.
---@param keep table<string, string>?
function M.withdraw(keep)
  if not keep then
    for name, value in pairs(withheld) do
      if vim.env[name] == nil then
        vim.env[name] = value
      end
    end
    withheld = {}
  end
  for _, name in ipairs(NAMES) do
    if ours[name] and not (keep and keep[name]) then
      if vim.env[name] == ours[name] then
        vim.env[name] = inherited[name] or nil
      end
      ours[name], inherited[name] = nil, nil
    end
  end
end

return M
