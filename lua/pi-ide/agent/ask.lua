-- `:PiIde ask`: text (and lines of a file) into an agent's input box as a
-- bracketed paste, as if pasted (opencode's through its server's /tui
-- API). Lines go as an at-mention (`@file#L2-4`) for Claude Code and
-- quoted in full for other agents. Enter is pressed only when the text
-- ends with a newline.
local tmux = require("pi-ide.agent.tmux")
local util = require("pi-ide.util")

local M = {}

local function relative(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

--- What goes into the input of an agent of `kind`: `text`, after lines
--- `first`..`last` (1-based) of `buf` when given.
function M.compose(kind, text, buf, first, last)
  if not first then
    return text
  end
  local path = relative(vim.api.nvim_buf_get_name(buf))
  local lines = first == last and ("L%d"):format(first) or ("L%d-%d"):format(first, last)
  if kind == "claude" then
    local mention = ("@%s#%s"):format(path, lines)
    return text == "" and (mention .. " ") or (mention .. " " .. text)
  end
  local quoted = { ("%s:%s"):format(path, first == last and first or (first .. "-" .. last)) }
  local fence = "```" .. vim.bo[buf].filetype
  quoted[#quoted + 1] = fence
  vim.list_extend(quoted, vim.api.nvim_buf_get_lines(buf, first - 1, last, false))
  quoted[#quoted + 1] = "```"
  return table.concat(quoted, "\n") .. "\n" .. text
end

--- Pastes `text` into `agent`'s input (see the top of this file).
function M.paste(agent, text)
  local enter = text:sub(-1) == "\n"
  if enter then
    text = text:sub(1, -2)
  end
  if agent.server then
    -- opencode's server takes it into its prompt (its /tui API): no
    -- keys to get lost in its terminal.
    require("pi-ide.seam").notify("opencode_prompt", { id = agent.id, text = text, submit = enter })
    return true
  end
  if agent.pane then
    tmux.paste(agent.pane, text, enter)
    return true
  end
  if not (agent.buf and vim.api.nvim_buf_is_valid(agent.buf)) then
    return false
  end
  -- Neovim's terminal brackets a paste when the program asked for it.
  vim.api.nvim_buf_call(agent.buf, function()
    vim.api.nvim_put(vim.split(text, "\n", { plain = true }), "c", false, true)
  end)
  if enter then
    vim.fn.chansend(agent.job, "\r")
  end
  return true
end

--- `:[range]PiIde ask [text]` from `buf` (nil range: just the text).
function M.ask(text, buf, first, last)
  local agents = require("pi-ide.agent")
  local agent = agents.target()
  if not agent then
    util.notify("no agent runs: :PiIde agent starts one", vim.log.levels.WARN)
    return false
  end
  if first and (vim.bo[buf].buftype ~= "" or vim.api.nvim_buf_get_name(buf) == "") then
    util.notify("lines can be sent only from a file", vim.log.levels.WARN)
    return false
  end
  if text == "" and not first then
    return agents.enter(agent)
  end
  M.paste(agent, M.compose(agent.kind, text, buf, first, last))
  return agents.enter(agent)
end

return M
