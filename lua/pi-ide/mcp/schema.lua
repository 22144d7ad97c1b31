-- The checks `register_tool` makes of an `input_schema`, so a mistake is
-- told to the config that made it, naming the field. The host checks the
-- same again before it serves a schema (src/mcp_http/user_schema.rs).
local M = {}

-- How a value is called in a message.
local function kind(value)
  if type(value) == "table" then
    return vim.islist(value) and next(value) ~= nil and "a list" or "a table"
  end
  return type(value) == "nil" and "nil" or ("a %s %s"):format(type(value), vim.inspect(value))
end

-- Why the `properties` or `required` of the schema at `at` are wrong;
-- nested property schemas are checked the same way.
local function fields_problem(schema, at)
  local properties = schema.properties
  if properties ~= nil then
    if type(properties) ~= "table" or (vim.islist(properties) and next(properties) ~= nil) then
      return ("%s.properties must map names to schemas, got %s"):format(at, kind(properties))
    end
    for name, property in pairs(properties) do
      if type(name) ~= "string" then
        return ("%s.properties[%s] must be named by a string"):format(at, vim.inspect(name))
      end
      local here = ("%s.properties.%s"):format(at, name)
      if type(property) ~= "table" then
        return ("%s must be a table (a JSON Schema), got %s"):format(here, kind(property))
      end
      local problem = fields_problem(property, here)
      if problem then
        return problem
      end
    end
  end
  local required = schema.required
  if required == nil then
    return nil
  end
  if type(required) ~= "table" or not vim.islist(required) then
    return ("%s.required must be a list of property names, got %s"):format(at, kind(required))
  end
  for i, name in ipairs(required) do
    local here = ("%s.required[%d]"):format(at, i)
    if type(name) ~= "string" then
      return ("%s must be a property name, got %s"):format(here, kind(name))
    end
    if type(properties) ~= "table" or properties[name] == nil then
      return ("%s is %q, not a key of %s.properties"):format(here, name, at)
    end
  end
end

--- Why `schema` cannot be a tool's input schema, naming the field; nil
--- when it can (nil itself: a tool without arguments).
---@param schema any
---@return string?
function M.problem(schema)
  if schema == nil then
    return nil
  end
  if type(schema) ~= "table" then
    return ("input_schema must be a table (a JSON Schema), got %s"):format(kind(schema))
  end
  if schema.type ~= "object" then
    return ('input_schema.type must be "object", got %s'):format(kind(schema.type))
  end
  if type(schema.properties) == "table" and schema.properties.projectPath ~= nil then
    return "input_schema.properties.projectPath is taken: every tool gets projectPath "
      .. "(the project the call is about) in its arguments"
  end
  return fields_problem(schema, "input_schema")
end

return M
