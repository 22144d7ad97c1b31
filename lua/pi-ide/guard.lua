-- The last check before Neovim writes a buffer whose file an agent named.
-- The host resolved the path (every symbolic link, dangling ones too) and
-- checked that it leads into the project; `:write` follows links, so this
-- makes sure that is still where it leads, right before the file opens:
-- once before the write, and again in a BufWritePre of its own, defined
-- last so it runs after every other (a formatter's time opens no gap).
local M = {}

local uv = vim.uv

--- nil when writing `path` still reaches `real` (the file the host
--- checked), else why not.
---@param path string absolute, as the buffer is named
---@param real string where it led when the host checked it
---@return string?
function M.problem(path, real)
  local now = uv.fs_realpath(path)
  if now then
    if now ~= real then
      return ("%s leads to %s now, not to the file that was checked"):format(path, now)
    end
    return nil
  end
  if uv.fs_lstat(path) then
    return ("%s is a symbolic link to a missing file now"):format(path)
  end
  local dir = uv.fs_realpath(vim.fs.dirname(path))
  local name = vim.fs.basename(path)
  if not dir or (dir == "/" and "/" .. name or dir .. "/" .. name) ~= real then
    return ("the directory of %s changed since it was checked"):format(path)
  end
  return nil
end

--- Runs the Ex `command` (a `:write`) in `buf`, whose file is `path`, only
--- while `path` leads to `real`. Returns ok and, when not ok, why.
---@return boolean, string?
function M.write(buf, path, real, command)
  local problem = M.problem(path, real)
  if problem then
    return false, problem
  end
  local late
  local id = vim.api.nvim_create_autocmd("BufWritePre", {
    buffer = buf,
    once = true,
    callback = function()
      late = M.problem(path, real)
      if late then
        -- An error here stops the write before the file is opened.
        error(late, 0)
      end
    end,
  })
  -- The agent hears "saved" once the text is on disk, whatever 'fsync' says.
  local fsync = vim.o.fsync
  vim.o.fsync = true
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd(command)
  end)
  vim.o.fsync = fsync
  pcall(vim.api.nvim_del_autocmd, id)
  if not ok then
    return false, late or tostring(err)
  end
  return true
end

return M
