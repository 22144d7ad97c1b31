-- Defines :PiIde and the <Plug> mappings; everything else loads on first use.
if vim.g.loaded_pi_ide then
  return
end
vim.g.loaded_pi_ide = true

if vim.fn.has("nvim-0.10") ~= 1 then
  vim.api.nvim_echo({ { "pi-ide.nvim needs Neovim 0.10 or newer: please upgrade Neovim", "ErrorMsg" } }, true, {})
  return
end

vim.api.nvim_create_user_command("PiIde", function(command)
  require("pi-ide.commands").run(command.fargs)
end, {
  nargs = "*",
  desc = "pi-ide.nvim: start|stop|restart|status|log|accept|reject|build",
  complete = function(arglead, cmdline)
    return require("pi-ide.commands").complete(arglead, cmdline)
  end,
})

vim.keymap.set("n", "<Plug>(PiIdeDiffAccept)", function()
  require("pi-ide.diff").accept()
end, { desc = "pi-ide: accept the diff in this tab" })
vim.keymap.set("n", "<Plug>(PiIdeDiffReject)", function()
  require("pi-ide.diff").reject()
end, { desc = "pi-ide: reject the diff in this tab" })
