-- Review sessions: the tab over the files (the HEAD version the host read
-- beside the working file, when git has it), comments through the public API and the input window,
-- and exactly one `review_done` when the person submits or cancels.
local t = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local describe, it, expect = t.describe, t.it, t.expect

vim.cmd("runtime plugin/pi-ide.lua")

-- A pretend host that keeps every notification.
require("pi-ide.host").channel = function()
  return 1
end
local sent = {}
vim.rpcnotify = function(_, event, ...)
  sent[#sent + 1] = { event = event, args = { ... } }
end
local function results()
  return vim.tbl_filter(function(message)
    return message.event == "review_done"
  end, sent)
end

local notified = {}
vim.notify = function(msg, level)
  notified[#notified + 1] = { msg = msg, level = level }
end

local events = {}
vim.api.nvim_create_autocmd("User", {
  pattern = { "PiIdeReviewOpened", "PiIdeReviewClosed" },
  callback = function(args)
    events[#events + 1] = { name = args.match, data = args.data }
  end,
})

local review = require("pi-ide.review")

local HEAD = {
  "local M = {}",
  "function M.one()",
  "  return 1",
  "end",
  "function M.two()",
  "  return 2",
  "end",
  "function M.three()",
  "  return 3",
  "end",
  "return M",
}
local WORKING = {
  "local M = {}",
  "function M.one()",
  "  return 10",
  "end",
  "function M.two()",
  "  return 2",
  "end",
  "function M.three()",
  "  return 3",
  "end",
  "function M.four()",
  "  return 4",
  "end",
  "return M",
}

-- A project with src/a.lua changed since HEAD (the host sends its HEAD
-- lines) and b.txt that git does not have.
local repo = vim.fn.tempname()
vim.fn.mkdir(repo .. "/src", "p")
vim.fn.writefile(WORKING, repo .. "/src/a.lua")
vim.fn.writefile({ "new", "file" }, repo .. "/b.txt")
local heads = { [repo] = { ["src/a.lua"] = HEAD } }

local plain = vim.fn.tempname()
vim.fn.mkdir(plain, "p")
vim.fn.writefile({ "one", "two", "three" }, plain .. "/c.txt")

local next_id = 0
local function open(root, files)
  next_id = next_id + 1
  sent, events, notified = {}, {}, {}
  expect(review.open({ id = next_id, root = root, files = files, heads = heads[root] or {} })):equals(true)
  return next_id
end

local function tab_buffers()
  return vim.tbl_map(function(win)
    return { buf = vim.api.nvim_win_get_buf(win), diff = vim.wo[win].diff }
  end, vim.api.nvim_tabpage_list_wins(0))
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

-- Runs the scheduled checks after a window or tab closed.
local function settle()
  vim.wait(50, function()
    return false
  end)
end

describe("a review", function()
  local tabs_before = #vim.api.nvim_list_tabpages()

  it("opens a tab with HEAD left and the working file right, in diff mode", function()
    open(repo, { "src/a.lua", "b.txt" })
    expect(#vim.api.nvim_list_tabpages()):equals(tabs_before + 1)
    local shown = tab_buffers()
    expect(#shown):equals(2)
    expect(lines(shown[1].buf)):equals(HEAD)
    expect(vim.bo[shown[1].buf].modifiable):equals(false)
    expect(vim.api.nvim_buf_get_name(shown[2].buf)):equals(repo .. "/src/a.lua")
    expect(lines(shown[2].buf)):equals(WORKING)
    expect({ shown[1].diff, shown[2].diff }):equals({ true, true })
    expect(vim.api.nvim_get_current_buf()):equals(shown[2].buf)
    expect(vim.wo.winbar:find(":PiIde comment", 1, true) ~= nil):is_true()
    expect(vim.wo.winbar:find("]f/[f files", 1, true) ~= nil):is_true()
    expect(vim.wo.winbar:find(":PiIde review submit", 1, true) ~= nil):is_true()
    expect(events):equals({ { name = "PiIdeReviewOpened", data = { files = { "src/a.lua", "b.txt" } } } })
  end)

  it("moves to a file git does not know: the whole file, no diff", function()
    expect(vim.fn.maparg("]f", "n", false, true).rhs):equals("<Plug>(PiIdeReviewNextFile)")
    review.next_file()
    local shown = tab_buffers()
    expect(#shown):equals(1)
    expect(vim.api.nvim_buf_get_name(shown[1].buf)):equals(repo .. "/b.txt")
    expect(shown[1].diff):equals(false)
    review.prev_file()
    expect(#tab_buffers()):equals(2)
  end)

  it("keeps comments on a line and a range, in line order", function()
    expect(review.comment("src/a.lua", 11, 13, "New function:\nis it needed?")):equals(true)
    expect(review.comment("src/a.lua", 3, nil, "Why 10?")):equals(true)
    expect(review.status()):equals({
      files = { "src/a.lua", "b.txt" },
      comments = {
        { file = "src/a.lua", line = 3, text = "Why 10?" },
        { file = "src/a.lua", line = 11, end_line = 13, text = "New function:\nis it needed?" },
      },
    })
    local buf = vim.api.nvim_get_current_buf()
    local signs = vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true, type = "sign" })
    expect(#signs):equals(4)
    expect(vim.wo.winbar:find("2 comments", 1, true) ~= nil):is_true()
  end)

  it("refuses lines outside the file and files outside the review", function()
    expect(function()
      review.comment("src/a.lua", 14, 15, "x")
    end):fails_with("not in src/a.lua")
    expect(function()
      review.comment("c.txt", 1, nil, "x")
    end):fails_with("not part of the review")
  end)

  it("jumps between comments with ]r and [r", function()
    expect(vim.fn.maparg("]r", "n", false, true).rhs):equals("<Plug>(PiIdeCommentNext)")
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    review.next_comment()
    expect(vim.fn.line(".")):equals(3)
    review.next_comment()
    expect(vim.fn.line(".")):equals(11)
    review.next_comment()
    expect(vim.fn.line(".")):equals(3)
    review.prev_comment()
    expect(vim.fn.line(".")):equals(11)
  end)

  it("refuses a second review and keeps the first", function()
    expect(function()
      review.open({ id = 99, root = plain, files = { "c.txt" } })
    end):fails_with("a review is already open")
    expect(#review.status().comments):equals(2)
  end)

  it("sends the comments once on submit, with their context", function()
    local head_buf = tab_buffers()[1].buf
    local file_buf = tab_buffers()[2].buf
    sent, events = {}, {}
    expect(review.submit()):equals(true)
    expect(review.submit()):equals(false)
    expect(#sent):equals(1)
    expect(sent[1].event):equals("review_done")
    expect(sent[1].args):equals({
      {
        id = 1,
        status = "submitted",
        comments = {
          {
            file = "src/a.lua",
            line = 3,
            text = "Why 10?",
            context = {
              "1: local M = {}",
              "2: function M.one()",
              "> 3:   return 10",
              "4: end",
              "5: function M.two()",
              "6:   return 2",
            },
          },
          {
            file = "src/a.lua",
            line = 11,
            endLine = 13,
            text = "New function:\nis it needed?",
            context = {
              "8: function M.three()",
              "9:   return 3",
              "10: end",
              "> 11: function M.four()",
              "> 12:   return 4",
              "> 13: end",
              "14: return M",
            },
          },
        },
      },
    })
    expect(events):equals({ { name = "PiIdeReviewClosed", data = { status = "submitted" } } })
    expect(review.status()):equals(nil)
    expect(#vim.api.nvim_list_tabpages()):equals(tabs_before)
    expect(vim.api.nvim_buf_is_valid(head_buf)):equals(false)
    expect(vim.fn.maparg("]r", "n", false, true)):equals({})
    if vim.api.nvim_buf_is_valid(file_buf) then
      expect(#vim.api.nvim_buf_get_extmarks(file_buf, -1, 0, -1, {})):equals(0)
    end
  end)
end)

describe("cancelling", function()
  it("sends cancelled without comments", function()
    local id = open(repo, { "src/a.lua" })
    review.comment("src/a.lua", 2, nil, "hm")
    vim.cmd("PiIde review cancel")
    expect(vim.tbl_map(function(m)
      return m.args
    end, results())):equals({ { { id = id, status = "cancelled", comments = {} } } })
    expect(review.status()):equals(nil)
  end)

  it("by closing the tab asks first when there are comments, and keeps it on no", function()
    local id = open(repo, { "src/a.lua" })
    review.comment("src/a.lua", 2, nil, "hm")
    local asked = {}
    local answer = 2
    local confirm = vim.fn.confirm
    vim.fn.confirm = function(message)
      asked[#asked + 1] = message
      return answer
    end
    vim.cmd("tabclose")
    settle()
    expect(#asked):equals(1)
    expect(asked[1]:find("1 comment will not be sent", 1, true) ~= nil):is_true()
    expect(#review.status().comments):equals(1)
    expect(#tab_buffers()):equals(2)
    expect(#results()):equals(0)

    answer = 1
    vim.cmd("tabclose")
    settle()
    vim.fn.confirm = confirm
    expect(#asked):equals(2)
    expect(review.status()):equals(nil)
    expect(results()[1].args):equals({ { id = id, status = "cancelled", comments = {} } })
  end)

  it("by closing the file's window, without asking when there are no comments", function()
    local id = open(repo, { "src/a.lua" })
    vim.cmd("close")
    settle()
    expect(review.status()):equals(nil)
    expect(results()[1].args):equals({ { id = id, status = "cancelled", comments = {} } })
  end)
end)

describe("the agent going away", function()
  it("closes the review, sends nothing and says why", function()
    local id = open(repo, { "src/a.lua" })
    review.comment("src/a.lua", 2, nil, "hm")
    expect(review.close(id, "pi disconnected")):equals(true)
    expect(sent):equals({})
    expect(review.status()):equals(nil)
    expect(notified[#notified].msg):equals("pi-ide: review closed: pi disconnected")
    expect(events[#events]):equals({
      name = "PiIdeReviewClosed",
      data = { status = "closed", reason = "pi disconnected" },
    })
  end)
end)

describe("a request that cannot be shown", function()
  it("raises for a missing file and opens nothing", function()
    local tabs, bufs = #vim.api.nvim_list_tabpages(), #vim.api.nvim_list_bufs()
    expect(function()
      review.open({ id = 50, root = repo, files = { "src/a.lua", "gone.lua" } })
    end):fails_with("gone.lua")
    expect(#vim.api.nvim_list_tabpages()):equals(tabs)
    expect(#vim.api.nvim_list_bufs()):equals(bufs)
    expect(review.status()):equals(nil)
  end)

  it("is reported by refused()", function()
    notified = {}
    review.refused("a review is already open")
    expect(notified):equals({ { msg = "pi-ide: a review is already open", level = vim.log.levels.WARN } })
  end)
end)

describe("outside git", function()
  it("shows the whole file", function()
    open(plain, { "c.txt" })
    local shown = tab_buffers()
    expect(#shown):equals(1)
    expect(lines(shown[1].buf)):equals({ "one", "two", "three" })
    expect(shown[1].diff):equals(false)
    expect(vim.wo.winbar:find("]f/[f", 1, true)):equals(nil)
  end)

  it("comments through the floating input and edits on a commented line", function()
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    vim.cmd("PiIde comment")
    local input = vim.api.nvim_get_current_win()
    expect(vim.api.nvim_win_get_config(input).relative):equals("win")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "first line", "second line", "" })
    vim.fn.maparg("<C-s>", "i", false, true).callback()
    expect(review.status().comments):equals({ { file = "c.txt", line = 2, text = "first line\nsecond line" } })

    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    vim.cmd("PiIde comment")
    expect(lines(0)):equals({ "first line", "second line" })
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "changed" })
    vim.fn.maparg("<CR>", "n", false, true).callback()
    expect(review.status().comments):equals({ { file = "c.txt", line = 2, text = "changed" } })
  end)

  it("comments on a range and deletes the comment under the cursor", function()
    vim.cmd("1,3PiIde comment")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "all of it" })
    vim.fn.maparg("<C-s>", "n", false, true).callback()
    -- The range starts on line 1, outside the comment on line 2: a new one.
    expect(#review.status().comments):equals(2)
    vim.api.nvim_win_set_cursor(0, { 2, 0 })
    vim.cmd("PiIde comment")
    vim.fn.maparg("q", "n", false, true).callback()
    expect(#review.status().comments):equals(2)
    expect(review.delete_comment()):equals(true)
    expect(review.status().comments):equals({ { file = "c.txt", line = 1, end_line = 3, text = "all of it" } })
  end)

  it("submits from the command", function()
    vim.cmd("PiIde review submit")
    expect(#results()):equals(1)
    expect(results()[1].args[1].comments):equals({
      {
        file = "c.txt",
        line = 1,
        endLine = 3,
        text = "all of it",
        context = { "> 1: one", "> 2: two", "> 3: three" },
      },
    })
  end)
end)

describe("keys", function()
  it("give back a buffer-local map of yours that a review key hid", function()
    vim.cmd.edit(vim.fn.fnameescape(plain .. "/c.txt"))
    vim.keymap.set("n", "]r", "<Nop>", { buffer = true, desc = "mine" })
    local buf = vim.api.nvim_get_current_buf()
    open(plain, { "c.txt" })
    expect(vim.api.nvim_get_current_buf()):equals(buf)
    expect(vim.fn.maparg("]r", "n", false, true).rhs):equals("<Plug>(PiIdeCommentNext)")
    review.cancel()
    vim.api.nvim_set_current_buf(buf)
    expect(vim.fn.maparg("]r", "n", false, true).desc):equals("mine")
    expect(vim.api.nvim_buf_is_loaded(buf)):equals(true)
  end)
end)

describe("<Plug>(PiIdeComment)", function()
  it("comments on the visual selection's lines", function()
    open(plain, { "c.txt" })
    vim.api.nvim_feedkeys(vim.keycode("2GVj<Plug>(PiIdeComment)"), "mx", false)
    local title = vim.api.nvim_win_get_config(0).title
    expect(title[1][1]):equals(" Comment on c.txt:2-3 ")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "these two" })
    vim.fn.maparg("<C-s>", "i", false, true).callback()
    expect(review.status().comments):equals({ { file = "c.txt", line = 2, end_line = 3, text = "these two" } })
    review.cancel()
  end)
end)

t.finish()
