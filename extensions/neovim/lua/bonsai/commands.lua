---@mod bonsai.commands The `:Bonsai {subcommand}` command and its completion

local M = {}

---@class bonsai.Subcommand
---@field impl fun(args: string[])
---@field complete (fun(arglead: string, args: string[]): string[])?
---@field desc string

---@param prefix string
---@param items string[]
---@return string[]
local function starting_with(prefix, items)
  return vim.tbl_filter(function(item)
    return vim.startswith(item, prefix)
  end, items)
end

---@param choices string[]
---@return fun(arglead: string, args: string[]): string[]
local function first_arg(choices)
  return function(arglead, args)
    if #args > 1 then
      return {}
    end
    return starting_with(arglead, choices)
  end
end

---@param msg string
local function fail(msg)
  vim.notify("bonsai: " .. msg, vim.log.levels.ERROR)
end

--- Session ids for completion: only asks a daemon that is already running.
---@return string[]
local function session_ids()
  local client = require("bonsai.client")
  if not client.is_ready() then
    return {}
  end
  local protocol = require("bonsai.protocol")
  local result = client.request_sync(protocol.methods.session_list, {}, 500)
  return vim.tbl_map(function(s)
    return s.sessionId
  end, result and result.sessions or {})
end

--- Memory entry names for completion (running daemon only).
---@return string[]
local function memory_names()
  local client = require("bonsai.client")
  if not client.is_ready() then
    return {}
  end
  local params = { workspace = require("bonsai.config").workspace() }
  local result = client.request_sync(require("bonsai.protocol").methods.memory_list, params, 500)
  return vim.tbl_map(function(e)
    return e.name
  end, result and result.entries or {})
end

---@type table<string, bonsai.Subcommand>
M.subcommands = {
  chat = {
    desc = "open the chat (the latest session; `new` starts one; extra words are sent)",
    impl = function(args)
      local chat = require("bonsai.chat")
      if args[1] == "new" then
        chat.open({ new = true, text = table.concat(args, " ", 2) })
      else
        chat.open({ text = table.concat(args, " ") })
      end
    end,
    complete = first_arg({ "new" }),
  },
  ctx = {
    desc = "open the context ledger (ledger, wire or turns view)",
    impl = function(args)
      local view = args[1]
      if view and not vim.tbl_contains({ "ledger", "wire", "turns" }, view) then
        return fail(("unknown view `%s`: expected ledger, wire or turns"):format(view))
      end
      require("bonsai.ledger").open(nil, view)
    end,
    complete = first_arg({ "ledger", "wire", "turns" }),
  },
  tree = {
    desc = "show the conversation tree (m moves a question where the rule puts it)",
    impl = function()
      require("bonsai.tree").open()
    end,
  },
  retry = {
    desc = "retry the last failed turn with its reflection (`dismiss` drops the offer)",
    impl = function(args)
      require("bonsai.reflect").retry(args[1] == "dismiss")
    end,
    complete = first_arg({ "dismiss" }),
  },
  episodes = {
    desc = "list the task episodes of the session",
    impl = function()
      require("bonsai.episodes").open()
    end,
  },
  memory = {
    desc = "list memory entries; `forget {name}` prunes one",
    impl = function(args)
      local memory = require("bonsai.memory")
      if args[1] == nil then
        return memory.open()
      end
      if args[1] == "forget" and args[2] then
        return memory.forget_by_name(args[2])
      end
      fail("usage: :Bonsai memory [forget {name}]")
    end,
    complete = function(arglead, args)
      if #args <= 1 then
        return starting_with(arglead, { "forget" })
      end
      if #args == 2 and args[1] == "forget" then
        return starting_with(arglead, memory_names())
      end
      return {}
    end,
  },
  rules = {
    desc = "list this workspace's rules; `add {text}` adds one",
    impl = function(args)
      local rules = require("bonsai.rules")
      if args[1] == nil then
        return rules.open()
      end
      if args[1] == "add" and args[2] then
        return rules.add(table.concat(args, " ", 2))
      end
      fail("usage: :Bonsai rules [add {text}]")
    end,
    complete = first_arg({ "add" }),
  },
  compact = {
    desc = "compact now: [preview] [target=N] [provider|deterministic|fallback]",
    impl = function(args)
      require("bonsai.actions").compact(args)
    end,
    complete = function(arglead)
      return starting_with(
        arglead,
        { "preview", "target=", "provider", "deterministic", "fallback" }
      )
    end,
  },
  remember = {
    desc = "remember a fact: [project|user] {fact}",
    impl = function(args)
      local tier = "user"
      if args[1] == "project" or args[1] == "user" then
        tier = table.remove(args, 1)
      end
      if #args == 0 then
        return fail("usage: :Bonsai remember [project|user] {fact}")
      end
      require("bonsai.memory").remember(table.concat(args, " "), tier)
    end,
    complete = first_arg({ "project", "user" }),
  },
  smol = {
    desc = "switch the small-model profile: [on|off|toggle]",
    impl = function(args)
      require("bonsai.actions").smol(args[1] or "toggle")
    end,
    complete = first_arg({ "on", "off", "toggle" }),
  },
  preset = {
    desc = "apply a context preset: keep, balanced or save",
    impl = function(args)
      require("bonsai.actions").preset(args[1])
    end,
    complete = first_arg({ "keep", "balanced", "save" }),
  },
  sessions = {
    desc = "pick a session of this workspace to open",
    impl = function()
      require("bonsai.actions").pick_session()
    end,
  },
  attach = {
    desc = "open the chat of a session by id",
    impl = function(args)
      if not args[1] then
        return fail("usage: :Bonsai attach {session-id}")
      end
      require("bonsai.chat").open({ session_id = args[1] })
    end,
    complete = function(arglead, args)
      return #args <= 1 and starting_with(arglead, session_ids()) or {}
    end,
  },
  cancel = {
    desc = "cancel the running turn",
    impl = function()
      require("bonsai.chat").cancel()
    end,
  },
  restart = {
    desc = "reconnect to the daemon",
    impl = function()
      require("bonsai.client").restart()
    end,
  },
}

---@return string[]
function M.names()
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return names
end

--- Run `:Bonsai {args}`; no argument opens the chat.
---@param fargs string[]
function M.run(fargs)
  local name = fargs[1] or "chat"
  local sub = M.subcommands[name]
  if not sub then
    return fail(
      ("unknown subcommand `%s`; expected one of: %s"):format(name, table.concat(M.names(), ", "))
    )
  end
  sub.impl(vim.list_slice(fargs, 2))
end

--- Completion for `:Bonsai`.
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local words = vim.split(vim.trim(cmdline:gsub("^%S+", "", 1)), "%s+", { trimempty = true })
  if arglead ~= "" then
    table.remove(words) -- the word being completed
  end
  if #words == 0 then
    return starting_with(arglead, M.names())
  end
  local sub = M.subcommands[words[1]]
  if not sub or not sub.complete then
    return {}
  end
  local args = vim.list_slice(words, 2)
  table.insert(args, arglead)
  return sub.complete(arglead, args)
end

return M
