---@mod bonsai.locate Finding the `bonsai` executable without configuration
---
--- When `cmd` is left at its default and `bonsai` is not on $PATH, the plugin
--- looks where Python tools usually are, in this order: the workspace's
--- `.venv` (only once you trust it, see |vim.secure.trust()|: a repository's
--- own files are not run unasked), `~/.local/bin`, pipx's venv, and finally
--- `python3 -m bonsai`. |:checkhealth| bonsai and a notification say which
--- one was used.

local M = {}

---@class bonsai.Located
---@field cmd string[] the command that bridges to the daemon
---@field how string where it was found, in words

---@param path string
---@return boolean
local function executable(path)
  return vim.fn.executable(path) == 1
end

--- Was this workspace file trusted by the user (|vim.secure.trust()|)?
---@param path string
---@return boolean
local function trusted(path)
  local ok, db = pcall(vim.fn.readfile, vim.fn.stdpath("state") .. "/trust")
  if not ok then
    return false
  end
  local real = vim.uv.fs_realpath(path) or path
  local handle = io.open(real, "rb")
  if not handle then
    return false
  end
  local digest = vim.fn.sha256(handle:read("*a") or "")
  handle:close()
  for _, line in ipairs(db) do
    local hash, file = line:match("^(%S+) (.+)$")
    if file == real and hash == digest then -- trusted as it is now (not edited since)
      return true
    end
  end
  return false
end

---@param workspace string
---@return {path: string, how: string, trust: boolean?}[]
function M.candidates(workspace)
  local home = vim.uv.os_homedir() or "~"
  local pipx_home = vim.env.PIPX_HOME or (home .. "/.local/pipx")
  local list = {
    { path = "bonsai", how = "bonsai on $PATH" },
    { path = workspace .. "/.venv/bin/bonsai", how = "the workspace's .venv", trust = true },
    { path = home .. "/.local/bin/bonsai", how = "~/.local/bin" },
  }
  if vim.env.PIPX_BIN_DIR then
    table.insert(list, { path = vim.env.PIPX_BIN_DIR .. "/bonsai", how = "pipx ($PIPX_BIN_DIR)" })
  end
  table.insert(list, { path = pipx_home .. "/venvs/bonsai/bin/bonsai", how = "pipx's venv" })
  return list
end

--- Find a bonsai command. `trust_check` decides whether a workspace file may run.
---@param workspace string
---@param trust_check (fun(path: string): boolean)?
---@return bonsai.Located? found
---@return string[] tried what was looked at, in words
function M.find(workspace, trust_check)
  trust_check = trust_check or trusted
  local tried = {}
  for _, c in ipairs(M.candidates(workspace)) do
    if executable(c.path) then
      if not c.trust or trust_check(c.path) then
        return { cmd = { c.path, "connect" }, how = c.how .. " (" .. c.path .. ")" }, tried
      end
      table.insert(tried, c.how .. " (not trusted: run :trust on " .. c.path .. ")")
    else
      table.insert(tried, c.how)
    end
  end
  if executable("python3") then
    -- -P: never import from Neovim's directory (a workspace may hold a bonsai/ of its own)
    vim.fn.system({ "python3", "-P", "-c", "import bonsai" })
    if vim.v.shell_error == 0 then
      return { cmd = { "python3", "-P", "-m", "bonsai", "connect" }, how = "python3 -m bonsai" }, tried
    end
  end
  table.insert(tried, "python3 -m bonsai")
  return nil, tried
end

return M
