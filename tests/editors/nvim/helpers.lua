-- Helpers for the bonsai.nvim specs: a tiny test runner, assertions, UI
-- answers for vim.ui.select/input, and daemon plumbing.
--
-- Specs run as `nvim --headless -u NONE -i NONE -n -l <spec>.lua` (see
-- tests/editors/test_neovim.py). Waits use vim.wait with a condition, never
-- fixed sleeps.

local H = {}

local here = debug.getinfo(1, "S").source:sub(2)
H.root = vim.fs.normalize(vim.fn.fnamemodify(here, ":p:h:h:h:h"))
H.plugin_dir = H.root .. "/extensions/neovim"

--- Put the plugin on 'runtimepath' and source plugin/bonsai.lua the way
--- Neovim does at startup (the specs run with -u NONE).
function H.load_plugin()
  vim.opt.rtp:prepend(H.plugin_dir)
  vim.cmd.runtime("plugin/bonsai.lua")
end

-- ---------------------------------------------------------------- runner
local cases = {}

---@param name string
---@param fn fun()
function H.test(name, fn)
  table.insert(cases, { name = name, fn = fn })
end

--- Stop the daemon this spec used (it is per spec: its own BONSAI_HOME) and
--- the client.
local function cleanup()
  H.stop_daemon()
  for _, client in ipairs(vim.lsp.get_clients({ name = "bonsai" })) do
    client:stop(true)
  end
end

--- Run every registered case and exit (status 1 when any failed).
function H.run()
  local failed = 0
  for _, case in ipairs(cases) do
    local started = vim.uv.hrtime()
    local ok, err = xpcall(case.fn, debug.traceback)
    local ms = (vim.uv.hrtime() - started) / 1e6
    if ok then
      io.stdout:write(("ok - %s (%.0f ms)\n"):format(case.name, ms))
    else
      failed = failed + 1
      io.stdout:write(("not ok - %s\n%s\n"):format(case.name, err))
    end
  end
  io.stdout:write(("%d passed, %d failed\n"):format(#cases - failed, failed))
  io.stdout:flush()
  cleanup()
  os.exit(failed == 0 and 0 or 1)
end

-- ---------------------------------------------------------------- asserts
---@param expected any
---@param actual any
---@param what string?
function H.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(
      ("%sexpected %s, got %s"):format(
        what and (what .. ": ") or "",
        vim.inspect(expected),
        vim.inspect(actual)
      ),
      2
    )
  end
end

---@param value any
---@param what string
function H.truthy(value, what)
  if not value then
    error(what, 2)
  end
end

---@param haystack string|string[]
---@param needle string plain text
---@param what string?
function H.contains(haystack, needle, what)
  local text = type(haystack) == "table" and table.concat(haystack, "\n") or haystack
  if not text:find(needle, 1, true) then
    error(("%sexpected to find %q in:\n%s"):format(what and (what .. ": ") or "", needle, text), 2)
  end
end

---@param haystack string|string[]
---@param needle string
function H.not_contains(haystack, needle)
  local text = type(haystack) == "table" and table.concat(haystack, "\n") or haystack
  if text:find(needle, 1, true) then
    error(("did not expect %q in:\n%s"):format(needle, text), 2)
  end
end

--- How many times `needle` (plain text) occurs in `text`.
---@param text string
---@param needle string
---@return integer
function H.count(text, needle)
  local n, from = 0, 1
  while true do
    local at = text:find(needle, from, true)
    if not at then
      return n
    end
    n, from = n + 1, at + #needle
  end
end

--- Wait until `cond()` is truthy; fail with `what` after `timeout` ms.
---@param cond fun(): any
---@param what string
---@param timeout integer?
---@return any the last value of cond()
function H.wait(cond, what, timeout)
  local value
  local ok = vim.wait(timeout or 60000, function() -- a ceiling for shared, loaded CI cores
    value = cond()
    return value
  end, 10)
  if not ok then
    error("timed out waiting for: " .. what, 2)
  end
  return value
end

--- `:Bonsai chat` on a new session: its id and its chat buffer, once both exist.
---@return string session_id
---@return integer buf
function H.open_chat()
  vim.cmd("Bonsai chat")
  local sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  local buf = H.wait(function()
    local b = vim.fn.bufnr("bonsai://chat/" .. sid)
    return b ~= -1 and b
  end, "the chat buffer")
  return sid, buf
end

--- Run Lua in another Neovim (an `--embed` job): wait there until the chat of `sid`
--- shows `needle` and return its text as it was then.
---@param other integer the job's channel
---@param sid string
---@param needle string
---@return string
function H.other_chat_when(other, sid, needle)
  return vim.rpcrequest(
    other,
    "nvim_exec_lua",
    [[
    local sid, needle = ...
    local text = ""
    vim.wait(60000, function()
      local b = vim.fn.bufnr("bonsai://chat/" .. sid)
      text = b ~= -1 and table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") or ""
      return text:find(needle, 1, true) ~= nil
    end, 5)
    return text
  ]],
    { sid, needle }
  )
end

---@param buf integer
---@return string[]
function H.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

-- ---------------------------------------------------------------- UI answers
--- Capture vim.notify messages.
---@return {msg: string, level: integer}[]
function H.capture_notify()
  local seen = {}
  vim.notify = function(msg, level)
    table.insert(seen, { msg = msg, level = level or vim.log.levels.INFO })
  end
  return seen
end

--- Answer vim.ui.select with `pick(items, opts)` (returns the chosen item).
--- Every prompt is recorded in the returned list.
---@param pick fun(items: any[], opts: table): any
---@return {items: any[], opts: table}[]
function H.answer_select(pick)
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, { items = items, opts = opts })
    local choice = pick(items, opts)
    local idx = nil
    for i, item in ipairs(items) do
      if item == choice then
        idx = i
      end
    end
    vim.schedule(function()
      on_choice(choice, idx)
    end)
  end
  return asked
end

--- Answer the next vim.ui.input prompts with these texts, in order.
---@param answers string[]
---@return string[] prompts seen
function H.answer_input(answers)
  local prompts = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(prompts, opts.prompt or "")
    local answer = table.remove(answers, 1)
    vim.schedule(function()
      on_confirm(answer)
    end)
  end
  return prompts
end

-- ---------------------------------------------------------------- daemon
--- Stop the daemon of this spec's BONSAI_HOME (it is shared by all clients).
function H.stop_daemon()
  local client = require("bonsai.client")
  if client.is_ready() then
    client.request_sync(require("bonsai.protocol").methods.daemon_stop, {}, 5000)
  end
end

return H
