-- :PiIde model — pick the model pi uses for suggestions. The choice is
-- remembered in stdpath("data")/pi-ide/suggestion-model.
local config = require("pi-ide.config")
local host = require("pi-ide.host")
local seam = require("pi-ide.seam")
local util = require("pi-ide.util")

local M = {}

local loaded, chosen = false, nil

local function store_path()
  return vim.fn.stdpath("data") .. "/pi-ide/suggestion-model"
end

--- The model to request: the remembered choice, else `suggestion.model`.
function M.current()
  if not loaded then
    loaded = true
    local file = io.open(store_path(), "r")
    if file then
      chosen = vim.trim(file:read("*a") or "")
      file:close()
      chosen = chosen ~= "" and chosen or nil
    end
  end
  return chosen or config.values.suggestion.model
end

local function remember(model)
  chosen, loaded = model, true
  vim.fn.mkdir(vim.fn.fnamemodify(store_path(), ":h"), "p")
  local file, err = io.open(store_path(), "w")
  if not file then
    util.notify("cannot remember the model: " .. tostring(err), vim.log.levels.WARN)
    return
  end
  file:write(model)
  file:close()
end

--- Asks the pi agent for its models; the answer arrives in on_models.
function M.pick()
  if not host.has_client("pi") then
    util.notify("no pi agent is connected (run /ide in pi)", vim.log.levels.WARN)
    return
  end
  seam.notify("list_models")
end

--- Seam `models`: the answer to listSuggestionModels.
function M.on_models(result, err)
  if err ~= nil and err ~= vim.NIL then
    util.notify("cannot list models: " .. tostring(err), vim.log.levels.ERROR)
    return
  end
  local models = type(result) == "table" and result.models or {}
  if #models == 0 then
    util.notify("the pi agent offers no models (configure one in pi)", vim.log.levels.WARN)
    return
  end
  local current = M.current() or result.currentModel
  local override = result.cliOverride ~= vim.NIL and result.cliOverride or nil
  local prompt = "Suggestion model"
  if override then
    prompt = ("Suggestion model (pi's --pi-ide-suggestion-model %s overrides this choice)"):format(override)
  end
  vim.ui.select(models, {
    prompt = prompt,
    format_item = function(model)
      local mark = model.model == current and "● " or "  "
      return ("%s%s (%s)"):format(mark, model.name or model.id, model.model)
    end,
  }, function(model)
    if not model then
      return
    end
    remember(model.model)
    local note = override and (" — pi's --pi-ide-suggestion-model %s still wins"):format(override) or ""
    util.notify(("suggestions will use %s%s"):format(model.model, note))
  end)
end

return M
