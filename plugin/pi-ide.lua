-- Defines :PiIde and the <Plug> mappings; everything else loads on first use.
if vim.g.loaded_pi_ide then
  return
end
vim.g.loaded_pi_ide = true

-- Older Neovims get nothing; setup() and :checkhealth pi-ide say why, once.
if vim.fn.has("nvim-0.11") ~= 1 then
  return
end

-- `:help pi-ide` needs doc/tags. Plugin managers write it (lazy.nvim runs
-- :helptags on install and update), but nothing does for a checkout put on
-- 'runtimepath' by hand (the README's try-it command, a lazy.nvim `dir = …`
-- spec). So write it when it is missing or older than the help file. The
-- check costs ~10 µs per start-up (getftime: a first vim.uv.fs_stat or
-- loading vim.fs costs more); :helptags ~0.2 ms, only after the help changed.
-- A read-only checkout is left as it is, silently.
do
  local doc = debug.getinfo(1, "S").source:sub(2):gsub("[^/]*/[^/]*$", "") .. "doc"
  local help = vim.fn.getftime(doc .. "/pi-ide.txt")
  if help >= 0 and vim.fn.getftime(doc .. "/tags") < help and vim.uv.fs_access(doc, "W") then
    local errmsg = vim.v.errmsg
    pcall(vim.cmd, "silent! helptags " .. vim.fn.fnameescape(doc))
    vim.v.errmsg = errmsg
  end
end

vim.api.nvim_create_user_command("PiIde", function(command)
  require("pi-ide.commands").run(command.fargs, command)
end, {
  nargs = "*",
  range = true,
  desc = "pi-ide.nvim: status|start|stop|restart|log|diff|accept|reject|send|ask|disk|install|build|suggest|model"
    .. "|agent|review|comment",
  complete = function(arglead, cmdline)
    return require("pi-ide.commands").complete(arglead, cmdline)
  end,
})

-- Every <Plug> map exists whatever the options say, so people can map their
-- own keys with the defaults off.
local plugs = {
  { "n", "PiIdeDiffAccept", "pi-ide.diff", "accept", "accept the diff in this tab" },
  { "n", "PiIdeDiffReject", "pi-ide.diff", "reject", "reject the diff in this tab" },
  { "n", "PiIdeDiffShow", "pi-ide.diff", "show", "go to the diff waiting for you" },
  { "n", "PiIdeDiffAcceptAll", "pi-ide.diff", "accept_all", "accept every file of this edit" },
  { "n", "PiIdeDiffRejectAll", "pi-ide.diff", "reject_all", "reject every file of this edit" },
  { "n", "PiIdeHunkAccept", "pi-ide.diff", "accept_hunk", "accept the hunk under the cursor" },
  { "n", "PiIdeHunkReject", "pi-ide.diff", "reject_hunk", "reject the hunk under the cursor" },
  { "i", "PiIdeSuggestionAccept", "pi-ide.suggest", "accept", "accept the suggestion" },
  { "i", "PiIdeSuggestionAcceptWord", "pi-ide.suggest", "accept_word", "accept the suggestion's next word" },
  { "i", "PiIdeSuggestionAcceptLine", "pi-ide.suggest", "accept_line", "accept the suggestion's line" },
  { "i", "PiIdeSuggestionNext", "pi-ide.suggest", "next", "next suggestion" },
  { "i", "PiIdeSuggestionPrev", "pi-ide.suggest", "prev", "previous suggestion" },
  { "i", "PiIdeSuggestionDismiss", "pi-ide.suggest", "dismiss", "dismiss the suggestion" },
  { "i", "PiIdeSuggestionTrigger", "pi-ide.suggest", "trigger", "ask for a suggestion" },
  -- In terminal mode too, so the agent's own window can hide itself.
  { { "n", "t" }, "PiIdeAgentToggle", "pi-ide.agent", "toggle", "hide or show the agent terminal" },
  { "n", "PiIdeAgentFocus", "pi-ide.agent", "focus", "show and enter the agent terminal" },
  { "n", "PiIdeCommentDelete", "pi-ide.review", "delete_comment", "delete the review comment on this line" },
  { "n", "PiIdeCommentNext", "pi-ide.review", "next_comment", "next review comment in this file" },
  { "n", "PiIdeCommentPrev", "pi-ide.review", "prev_comment", "previous review comment in this file" },
  { "n", "PiIdeReviewNextFile", "pi-ide.review", "next_file", "next file of the review" },
  { "n", "PiIdeReviewPrevFile", "pi-ide.review", "prev_file", "previous file of the review" },
  { "n", "PiIdeReviewSubmit", "pi-ide.review", "submit", "submit the review" },
  { "n", "PiIdeReviewCancel", "pi-ide.review", "cancel", "cancel the review" },
}
-- The visual selection's lines (ending Visual mode), or nil, nil.
local function selected_lines()
  if not vim.fn.mode():find("^[vV\22]") then
    return nil, nil
  end
  local first, last = vim.fn.line("v"), vim.fn.line(".")
  vim.api.nvim_feedkeys(vim.keycode("<Esc>"), "nx", false)
  return math.min(first, last), math.max(first, last)
end
-- The current line, or the visual selection's lines, as an at-mention.
vim.keymap.set({ "n", "x" }, "<Plug>(PiIdeSend)", function()
  local first, last = selected_lines()
  local line = vim.fn.line(".")
  require("pi-ide.mention").send(first or line, last or line)
end, { desc = "pi-ide: at-mention the line or selection for Claude Code" })
-- Text for the agent's input (asked with vim.ui.input), with the visual
-- selection's lines as a mention.
vim.keymap.set({ "n", "x" }, "<Plug>(PiIdeAsk)", function()
  local first, last = selected_lines()
  local buf = vim.api.nvim_get_current_buf()
  vim.ui.input({ prompt = "Ask the agent: " }, function(text)
    if text then
      require("pi-ide.agent.ask").ask(text, buf, first, last)
    end
  end)
end, { desc = "pi-ide: text (and the selection) into the agent's input" })
-- A review comment on the current line (editing the one there) or on the
-- visual selection's lines.
vim.keymap.set({ "n", "x" }, "<Plug>(PiIdeComment)", function()
  require("pi-ide.review").comment_here(selected_lines())
end, { desc = "pi-ide: comment on the line or selection in a review" })

for _, plug in ipairs(plugs) do
  local mode, name, module, action, desc = unpack(plug)
  vim.keymap.set(mode, "<Plug>(" .. name .. ")", function()
    require(module)[action]()
  end, { desc = "pi-ide: " .. desc })
end
