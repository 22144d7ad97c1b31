-- The <Plug> maps exist whatever `keymaps` says, and run their module's
-- function.
local t = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

vim.cmd("runtime plugin/pi-ide.lua")

local PLUGS = {
  { "n", "<Plug>(PiIdeDiffAccept)", "pi-ide.diff", "accept" },
  { "n", "<Plug>(PiIdeDiffReject)", "pi-ide.diff", "reject" },
  { "n", "<Plug>(PiIdeDiffShow)", "pi-ide.diff", "show" },
  { "n", "<Plug>(PiIdeDiffAcceptAll)", "pi-ide.diff", "accept_all" },
  { "n", "<Plug>(PiIdeDiffRejectAll)", "pi-ide.diff", "reject_all" },
  { "n", "<Plug>(PiIdeHunkAccept)", "pi-ide.diff", "accept_hunk" },
  { "n", "<Plug>(PiIdeHunkReject)", "pi-ide.diff", "reject_hunk" },
  { "i", "<Plug>(PiIdeSuggestionAccept)", "pi-ide.suggest", "accept" },
  { "i", "<Plug>(PiIdeSuggestionAcceptWord)", "pi-ide.suggest", "accept_word" },
  { "i", "<Plug>(PiIdeSuggestionAcceptLine)", "pi-ide.suggest", "accept_line" },
  { "i", "<Plug>(PiIdeSuggestionNext)", "pi-ide.suggest", "next" },
  { "i", "<Plug>(PiIdeSuggestionPrev)", "pi-ide.suggest", "prev" },
  { "i", "<Plug>(PiIdeSuggestionDismiss)", "pi-ide.suggest", "dismiss" },
  { "i", "<Plug>(PiIdeSuggestionTrigger)", "pi-ide.suggest", "trigger" },
  { "n", "<Plug>(PiIdeSend)", "pi-ide.mention", "send" },
  { "x", "<Plug>(PiIdeSend)", "pi-ide.mention", "send" },
  { "n", "<Plug>(PiIdeAgentToggle)", "pi-ide.agent", "toggle" },
  { "t", "<Plug>(PiIdeAgentToggle)", "pi-ide.agent", "toggle" },
  { "n", "<Plug>(PiIdeAgentFocus)", "pi-ide.agent", "focus" },
  { "n", "<Plug>(PiIdeComment)", "pi-ide.review", "comment_here" },
  { "x", "<Plug>(PiIdeComment)", "pi-ide.review", "comment_here" },
  { "n", "<Plug>(PiIdeCommentDelete)", "pi-ide.review", "delete_comment" },
  { "n", "<Plug>(PiIdeCommentNext)", "pi-ide.review", "next_comment" },
  { "n", "<Plug>(PiIdeCommentPrev)", "pi-ide.review", "prev_comment" },
  { "n", "<Plug>(PiIdeReviewNextFile)", "pi-ide.review", "next_file" },
  { "n", "<Plug>(PiIdeReviewPrevFile)", "pi-ide.review", "prev_file" },
  { "n", "<Plug>(PiIdeReviewSubmit)", "pi-ide.review", "submit" },
  { "n", "<Plug>(PiIdeReviewCancel)", "pi-ide.review", "cancel" },
}

local function missing_plugs()
  local missing = {}
  for _, plug in ipairs(PLUGS) do
    if vim.fn.maparg(plug[2], plug[1], false, true).callback == nil then
      missing[#missing + 1] = plug[2]
    end
  end
  return missing
end

-- Runs setup() and what the first InsertEnter does (mapping the keys).
local function setup(opts)
  require("pi-ide").setup(vim.tbl_deep_extend("force", { auto_start = false }, opts))
  vim.api.nvim_exec_autocmds("InsertEnter", { group = "PiIde" })
end

local function ours(lhs)
  local desc = vim.fn.maparg(lhs, "i", false, true).desc
  return desc ~= nil and vim.startswith(desc, "pi-ide")
end

describe("<Plug> maps", function()
  it("exist once the plugin file has loaded, without loading their modules", function()
    expect(missing_plugs()):equals({})
    expect(package.loaded["pi-ide.diff"]):equals(nil)
    expect(package.loaded["pi-ide.suggest"]):equals(nil)
    expect(package.loaded["pi-ide.agent"]):equals(nil)
    expect(package.loaded["pi-ide.review"]):equals(nil)
  end)

  it("exist with suggestion keymaps = false", function()
    setup({ suggestion = { keymaps = false } })
    expect(ours("<Tab>")):equals(false)
    expect(missing_plugs()):equals({})
  end)

  it("exist with the default keymaps", function()
    setup({})
    expect(ours("<Tab>")):equals(true)
    expect(missing_plugs()):equals({})
  end)

  it("run their module's function", function()
    for _, plug in ipairs(PLUGS) do
      local module = require(plug[3])
      local original, called = module[plug[4]], false
      module[plug[4]] = function()
        called = true
      end
      vim.fn.maparg(plug[2], plug[1], false, true).callback()
      module[plug[4]] = original
      expect({ plug[2], called }):equals({ plug[2], true })
    end
  end)
end)

t.finish()
