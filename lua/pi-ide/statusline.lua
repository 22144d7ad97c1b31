-- `require("pi-ide").statusline()`: what a statusline shows of pi-ide,
-- kept as one string and rebuilt only after the events that change it.
local M = {}

local cached = nil

local function plural(n, word)
  return ("%d %s%s"):format(n, word, n == 1 and "" or "s")
end

local function build()
  local host = require("pi-ide.host")
  local status = host.status()
  if not status.running then
    return ""
  end
  local parts = {}
  local kinds, seen = {}, {}
  for _, client in ipairs(status.clients) do
    local name = client.kind == "socket" and "pi" or client.kind
    if not seen[name] then
      seen[name] = true
      kinds[#kinds + 1] = name
    end
  end
  parts[1] = #kinds > 0 and table.concat(kinds, ",") or "no agent"
  if #status.diffs > 0 then
    parts[#parts + 1] = plural(#status.diffs, "diff")
  end
  local review = package.loaded["pi-ide.review"]
  if review and review.status() then
    parts[#parts + 1] = "review"
  end
  return table.concat(parts, " · ")
end

local function invalidate()
  cached = nil
end

--- The statusline string.
function M.get()
  if cached == nil then
    if not M.watching then
      M.watching = true
      vim.api.nvim_create_autocmd("User", {
        group = vim.api.nvim_create_augroup("PiIdeStatusline", { clear = true }),
        pattern = {
          "PiIdeStarted",
          "PiIdeStopped",
          "PiIdeClientConnected",
          "PiIdeClientDisconnected",
          "PiIdeDiffOpened",
          "PiIdeDiffClosed",
          "PiIdeReviewOpened",
          "PiIdeReviewClosed",
        },
        callback = invalidate,
        desc = "pi-ide: the statusline changes",
      })
    end
    cached = build()
  end
  return cached
end

return M
