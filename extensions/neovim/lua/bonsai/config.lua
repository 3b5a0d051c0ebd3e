---@mod bonsai.config Options: defaults, merging and validation
---
--- Options come from `vim.g.bonsai` (a table or a function returning one) and
--- from `require("bonsai").setup(opts)`, which merges into `vim.g.bonsai`.
--- Invalid values are reported once with a clear message and replaced by
--- their defaults, so a typo never leaves the plugin half-configured.

local M = {}

---@alias bonsai.SplitKind "vertical"|"horizontal"|"tab"|"current"|"float"

---@class bonsai.KeysConfig: table<string, string|false>

---@class bonsai.ChatConfig
---@field split bonsai.SplitKind where the chat window opens
---@field size integer width (vertical) or height (horizontal) of the split
---@field tool_output_lines integer lines of a tool result shown inside its fold
---@field keys bonsai.KeysConfig buffer-local keys (`false` disables one)

---@class bonsai.PanelConfig
---@field split bonsai.SplitKind
---@field size integer
---@field keys bonsai.KeysConfig

---@class bonsai.LedgerConfig: bonsai.PanelConfig
---@field view "ledger"|"wire"|"turns" the view shown first
---@field bar_width integer width of the fill bar in the header

---@class bonsai.StatuslineConfig
---@field format string `string.format` pattern receiving the percent (a number)

---@class bonsai.Config
---@field cmd string[] command that bridges to the shared daemon
---@field cmd_env table<string, string> extra environment for `cmd`
---@field workspace string|fun():string|nil workspace root; nil detects it from the cwd
---@field root_markers string[] files that mark a workspace root
---@field request_timeout_ms integer timeout of blocking requests (health, completion)
---@field notify_handoff boolean offer a fresh session when the daemon suggests one
---@field chat bonsai.ChatConfig
---@field ledger bonsai.LedgerConfig
---@field episodes bonsai.PanelConfig
---@field memory bonsai.PanelConfig
---@field rules bonsai.PanelConfig
---@field tree bonsai.PanelConfig
---@field statusline bonsai.StatuslineConfig
---@field approval {prompt: "float"|"select"}

---@type bonsai.Config
M.defaults = {
  cmd = { "bonsai", "connect" },
  cmd_env = {},
  workspace = nil,
  root_markers = { ".git" },
  request_timeout_ms = 10000,
  notify_handoff = true,
  chat = {
    split = "vertical",
    size = 80,
    tool_output_lines = 20,
    keys = {
      send = "<CR>",
      cancel = "<C-c>",
      close = "q",
      ledger = "gc",
    },
  },
  ledger = {
    split = "vertical",
    size = 60,
    view = "ledger",
    bar_width = 20,
    keys = {
      pin = "p",
      unpin = "u",
      drop = "d",
      drop_step = "D",
      stub = "s",
      restore = "r",
      expand = "<CR>",
      cycle_view = "v",
      refresh = "R",
      close = "q",
    },
  },
  episodes = {
    split = "float",
    size = 12,
    keys = { recall = "<CR>", search = "/", restore = "r", refresh = "R", close = "q" },
  },
  memory = {
    split = "float",
    size = 12,
    keys = {
      open = "<CR>",
      forget = "x",
      toggle = "t",
      add = "a",
      refresh = "R",
      close = "q",
    },
  },
  rules = {
    split = "float",
    size = 10,
    keys = {
      add = "a",
      edit = "e",
      toggle = "t",
      delete = "x",
      refresh = "R",
      close = "q",
    },
  },
  tree = {
    split = "vertical",
    size = 60,
    keys = { jump = "<CR>", move = "m", refresh = "R", close = "q" },
  },
  statusline = { format = "ctx %d%%" },
  approval = { prompt = "float" },
}

local SPLITS = { vertical = true, horizontal = true, tab = true, current = true, float = true }
local VIEWS = { ledger = true, wire = true, turns = true }

---@param value any
---@return boolean
local function is_string_list(value)
  if type(value) ~= "table" or not vim.islist(value) or #value == 0 then
    return false
  end
  for _, item in ipairs(value) do
    if type(item) ~= "string" or item == "" then
      return false
    end
  end
  return true
end

---@param value any
---@return boolean
local function is_positive_integer(value)
  return type(value) == "number" and value >= 1 and math.floor(value) == value
end

---@param value any
---@return boolean
local function is_string_map(value)
  if type(value) ~= "table" then
    return false
  end
  for k, v in pairs(value) do
    if type(k) ~= "string" or type(v) ~= "string" then
      return false
    end
  end
  return true
end

---@param value any
---@return boolean
local function is_format(value)
  return type(value) == "string" and pcall(string.format, value, 42)
end

---@alias bonsai.Check {[1]: string|fun(v: any): boolean, [2]: string?}

--- Leaf validators: a vim.validate type name or a predicate plus the message
--- that names what was expected.
---@type table<string, bonsai.Check>
local LEAVES = {
  cmd = { is_string_list, "a non-empty list of strings, e.g. { 'bonsai', 'connect' }" },
  cmd_env = { is_string_map, "a table of string → string" },
  workspace = {
    function(v)
      return v == nil or type(v) == "string" or vim.is_callable(v)
    end,
    "a path or a function returning one",
  },
  root_markers = { is_string_list, "a non-empty list of file names" },
  request_timeout_ms = { is_positive_integer, "a positive integer" },
  notify_handoff = { "boolean" },
  split = {
    function(v)
      return SPLITS[v] == true
    end,
    "one of vertical, horizontal, tab, current, float",
  },
  size = { is_positive_integer, "a positive integer" },
  tool_output_lines = { is_positive_integer, "a positive integer" },
  view = {
    function(v)
      return VIEWS[v] == true
    end,
    "one of ledger, wire, turns",
  },
  bar_width = { is_positive_integer, "a positive integer" },
  format = { is_format, "a string.format pattern taking one number, e.g. 'ctx %d%%'" },
  prompt = {
    function(v)
      return v == "float" or v == "select"
    end,
    "one of float (a/r in a small window), select (vim.ui.select)",
  },
}

--- Validate one value with vim.validate (both the 0.10 and 0.11 signatures).
---@param name string dotted option name
---@param value any
---@param check bonsai.Check
---@return string? error
function M.validate(name, value, check)
  local validator, expected = check[1], check[2]
  local ok, err = pcall(function()
    if vim.fn.has("nvim-0.11") == 1 then
      vim.validate(name, value, validator, false, expected)
    else
      vim.validate({ [name] = { value, validator, expected } })
    end
  end)
  if ok then
    return nil
  end
  if expected then
    return ("%s: expected %s, got %s"):format(name, expected, vim.inspect(value))
  end
  return (tostring(err):gsub("^.-:%d+: ", ""))
end

---@param name string
---@param value any
---@return string? error
local function validate_key_lhs(name, value)
  if value == false or (type(value) == "string" and value ~= "") then
    return nil
  end
  return ("%s: expected a key (string) or false, got %s"):format(name, vim.inspect(value))
end

--- Merge `user` over `default`, validating every leaf.
---@param prefix string
---@param default table
---@param user table
---@param errors string[]
---@return table
local function merge(prefix, default, user, errors)
  local out = vim.deepcopy(default)
  for key, value in pairs(user) do
    local name = prefix == "" and tostring(key) or (prefix .. "." .. tostring(key))
    local base = default[key]
    if prefix:match("keys$") then
      local err = base == nil and ("unknown key action `%s`"):format(name)
        or validate_key_lhs(name, value)
      if err then
        table.insert(errors, err)
      else
        out[key] = value
      end
    elseif base == nil and LEAVES[key] == nil then
      table.insert(errors, ("unknown option `%s`"):format(name))
    elseif type(base) == "table" and not vim.islist(base) and LEAVES[key] == nil then
      if type(value) ~= "table" then
        table.insert(errors, ("%s: expected a table, got %s"):format(name, vim.inspect(value)))
      else
        out[key] = merge(name, base, value, errors)
      end
    else
      local err = M.validate(name, value, LEAVES[key] or { type(base) })
      if err then
        table.insert(errors, err)
      else
        out[key] = value
      end
    end
  end
  return out
end

--- The user's raw options: `vim.g.bonsai` (table or function).
---@return table
local function user_options()
  local raw = vim.g.bonsai
  if type(raw) == "function" then
    raw = raw()
  end
  if raw == nil then
    return {}
  end
  if type(raw) ~= "table" then
    return { __invalid = raw }
  end
  return raw
end

--- Validate options without side effects.
---@param opts table?
---@return bonsai.Config config the merged options (defaults where invalid)
---@return string[] errors one message per invalid or unknown option
function M.resolve(opts)
  local errors = {}
  opts = opts or user_options()
  if opts.__invalid ~= nil then
    table.insert(
      errors,
      ("vim.g.bonsai: expected a table or a function, got %s"):format(vim.inspect(opts.__invalid))
    )
    return vim.deepcopy(M.defaults), errors
  end
  local config = merge("", M.defaults, opts, errors)
  table.sort(errors)
  return config, errors
end

---@type table<string, true>
local reported = {}

--- The effective options. Problems are reported once each, as an error.
---@return bonsai.Config
function M.get()
  local config, errors = M.resolve()
  for _, err in ipairs(errors) do
    if not reported[err] then
      reported[err] = true
      vim.notify("bonsai: invalid option: " .. err .. " (using the default)", vim.log.levels.ERROR)
    end
  end
  return config
end

--- The workspace root sent to the daemon.
---@param config bonsai.Config?
---@return string
function M.workspace(config)
  config = config or M.get()
  local ws = config.workspace
  if type(ws) == "string" then
    local path = vim.fs.normalize(vim.fn.fnamemodify(ws, ":p"))
    return (path:gsub("(.)/$", "%1"))
  end
  if vim.is_callable(ws) then
    return ws()
  end
  local cwd = assert(vim.uv.cwd())
  return vim.fs.root(cwd, config.root_markers) or cwd
end

return M
