---@mod bonsai.chat The chat buffer
---
--- One scratch buffer per session (`bonsai://chat/<id>`). Replies stream in
--- as `bonsai/chat/event` deltas arrive; tool calls are folded; `<CR>` asks
--- for a message, `<C-c>` cancels the running turn. Every Neovim attached to
--- the session sees the same conversation.

local client = require("bonsai.client")
local client_settings = require("bonsai.client_settings")
local config = require("bonsai.config")
local events = require("bonsai.events")
local model_ops = require("bonsai.chat_model")
local protocol = require("bonsai.protocol")
local state = require("bonsai.state")
local ui = require("bonsai.ui")
local window = require("bonsai.chat_window")

local methods = protocol.methods

local M = {}

---@class bonsai.ChatView
---@field buf integer
---@field session_id string
---@field model bonsai.ChatModel
---@field tail_is_text boolean
---@field running string? id of the turn in progress
---@field finished table<string, true> ids of turns that ended (events may beat replies)
---@field queued table<string, true> ids of turns sent while another ran, not yet started

---@type table<string, bonsai.ChatView>
local views = {}

--- The chat view of a session, if one is open.
---@param session_id string
---@return bonsai.ChatView?
function M.view(session_id)
  return views[session_id]
end

--- Ask for a message and send it (to a new session when there is none).
---@param session_id string?
function M.prompt(session_id)
  session_id = session_id or state.session_for_buffer()
  vim.ui.input({ prompt = "bonsai> " }, function(text)
    if text and vim.trim(text) ~= "" then
      M.send(text, session_id)
    end
  end)
end

--- The hard reset a chat line asks for (`/clear`, `/start`, `/review`), if any.
---@param text string
---@return string?
function M.reset_kind(text)
  local kind = vim.trim(text):match("^/(%a+)$")
  kind = kind and kind:lower()
  if kind == "clear" or kind == "start" or kind == "review" then
    return kind
  end
  return nil
end

--- A hard reset: the daemon closes the session's open task episode
--- (`bonsai/session/reset`); its answer is noted in the chat and notified.
---@param kind string
---@param session_id string?
function M.reset(kind, session_id)
  session_id = session_id or state.session_for_buffer()
  if not session_id then
    vim.notify("bonsai: no session to reset", vim.log.levels.WARN)
    return
  end
  client.call(methods.session_reset, { sessionId = session_id, kind = kind }, function(result)
    local line = ("/%s: %s"):format(kind, result.message)
    M.note(session_id, line)
    vim.notify("bonsai " .. line, vim.log.levels.INFO)
  end)
end

--- Send a message to a session (the current one by default), opening its
--- chat first when it is not open, so the reply is seen. `/clear`, `/start`
--- and `/review` are hard resets, not messages.
---@param text string
---@param session_id string?
function M.send(text, session_id)
  local reset = M.reset_kind(text)
  if reset then
    M.reset(reset, session_id)
    return
  end
  session_id = session_id or state.session_for_buffer()
  if not session_id or not views[session_id] then
    M.open({ session_id = session_id, text = text })
    return
  end
  state.set_current(session_id)
  client_settings.call(methods.chat_send, { sessionId = session_id, text = text }, function(result)
    local view = views[session_id]
    if not view or view.finished[result.turnId] then
      return
    end
    if view.running == nil or view.running == result.turnId then
      view.running = result.turnId
    else -- behind the turn streaming: cancel still means that one, this one starts next
      view.queued[result.turnId] = true
    end
    window.update_winbar(view)
  end)
end

--- The message for a question about lines of a file: the question, then the
--- lines in a fenced block headed by the path and range.
---@param question string
---@param path string
---@param first integer
---@param lines string[]
---@param filetype string
---@return string
function M.quote(question, path, first, lines, filetype)
  local where = ("%s:%d-%d"):format(path, first, first + #lines - 1)
  local fence = "```"
  return table.concat(
    { question, "", where, fence .. filetype, table.concat(lines, "\n"), fence },
    "\n"
  )
end

--- Ask a question about the lines of the last visual selection and send both.
function M.send_selection()
  local buf = vim.api.nvim_get_current_buf()
  local first, last = vim.fn.line("'<"), vim.fn.line("'>")
  local lines = vim.api.nvim_buf_get_lines(buf, first - 1, last, false)
  local path = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":.")
  local filetype = vim.bo[buf].filetype
  vim.ui.input({ prompt = "bonsai (about the selection)> " }, function(question)
    if question and vim.trim(question) ~= "" then
      M.send(M.quote(question, path, first, lines, filetype))
    end
  end)
end

--- Cancel the running turn of a session (the current one by default).
---@param session_id string?
function M.cancel(session_id)
  session_id = session_id or state.session_for_buffer()
  if not session_id then
    return
  end
  local view = views[session_id]
  local params = { sessionId = session_id, turnId = view and view.running or nil }
  client.call(methods.chat_cancel, params, function(result)
    if not result.cancelled then
      vim.notify("bonsai: no turn was running", vim.log.levels.INFO)
    end
  end)
end

---@param view bonsai.ChatView
local function setup_buffer(view)
  local buf, keys = view.buf, config.get().chat.keys
  vim.b[buf].bonsai_session = view.session_id
  local sid = view.session_id
  ui.map_keys(buf, keys, {
    send = {
      function()
        M.prompt(sid)
      end,
      "send a message",
    },
    cancel = {
      function()
        M.cancel(sid)
      end,
      "cancel the running turn",
    },
    close = {
      function()
        ui.close()
      end,
      "close the chat window",
    },
    ledger = {
      function()
        require("bonsai.ledger").open(sid)
      end,
      "open the context ledger",
    },
  })
  vim.api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    callback = function()
      window.set_options(vim.api.nvim_get_current_win())
      window.update_winbar(view)
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      views[sid] = nil
      window.forget(buf)
      if client.is_ready() then
        client.request(methods.session_detach, { sessionId = sid }, function() end)
      end
    end,
  })
end

---@param session_id string
---@return bonsai.ChatView
local function ensure_view(session_id)
  local view = views[session_id]
  if view and vim.api.nvim_buf_is_valid(view.buf) then
    return view
  end
  local buf = ui.scratch("bonsai://chat/" .. session_id, "bonsai-chat")
  vim.bo[buf].syntax = "markdown"
  -- Markdown flags `_` inside words (test_total_counts) as an error; chat text is
  -- full of identifiers, so an intraword underscore is plain text here.
  vim.api.nvim_buf_call(buf, function()
    vim.cmd([[syntax match bonsaiIntraword /\w\@<=_\w\@=/]])
  end)
  local max = config.get().chat.tool_output_lines
  view = { buf = buf, session_id = session_id, model = model_ops.new("", max) }
  view.tail_is_text, view.finished, view.queued = false, {}, {}
  views[session_id] = view
  setup_buffer(view)
  return view
end

-- session id → one list per attach of it still being answered, of the chat events that
-- came meanwhile: the running turn so far (the daemon sends it just before each answer),
-- shown with the log that answer loads
---@type table<string, bonsai.ChatEventParams[][]>
local backlogs = {}

--- Attach to a session and (re)load its log into its view, with the running turn's
--- events so far when it is attached mid-turn.
---@param session_id string
---@param cb fun(view: bonsai.ChatView)?
function M.attach(session_id, cb)
  local backlog, pending = {}, backlogs[session_id] or {}
  table.insert(pending, backlog)
  backlogs[session_id] = pending
  client.request(methods.session_attach, { sessionId = session_id }, function(err, result)
    for i, other in ipairs(pending) do
      if other == backlog then
        table.remove(pending, i)
        break
      end
    end
    if #pending == 0 then
      backlogs[session_id] = nil
    end
    if err then
      vim.notify(("bonsai: attach failed: %s"):format(err.message), vim.log.levels.ERROR)
      return
    end
    local view = ensure_view(session_id)
    view.model.title = result.session.title or ""
    model_ops.reset(view.model, result.messages or {})
    view.running = next(model_ops.catch_up(view.model, backlog))
    window.redraw(view)
    state.set_current(session_id)
    if cb then
      cb(view)
    end
  end)
end

---@param view bonsai.ChatView
---@param text string?
local function show(view, text)
  local cfg = config.get().chat
  local win = ui.show(view.buf, cfg.split, cfg.size)
  window.set_options(win)
  window.follow(view.buf, { win })
  if text and text ~= "" then
    M.send(text, view.session_id)
  end
end

---@class bonsai.ChatOpenOpts
---@field session_id string? attach to this session
---@field new boolean? always create a new session
---@field text string? send this message once the chat is open

---@param sid string
---@param text string?
local function attach_and_show(sid, text)
  M.attach(sid, function(view)
    show(view, text)
  end)
end

--- Create a session for the workspace and open its chat.
---@param text string?
local function create(text)
  local params = { workspace = config.workspace() }
  -- Creating may take seconds (a local server is asked about its model first): say so.
  state.creating = true
  vim.api.nvim_echo({ { "bonsai: starting a new session…" } }, false, {})
  client_settings.call(methods.session_create, params, function(result)
    state.creating = false
    M.attach(result.sessionId, function(view)
      vim.cmd.echo('""') -- the "starting…" line is done: not left on the command line
      show(view, text)
    end)
  end, function()
    state.creating = false
  end)
end

--- Open the chat: the given session, else the current one, else the workspace's
--- latest (as `bonsai chat` continues it), else a new one; `new` always creates one.
---@param opts bonsai.ChatOpenOpts?
function M.open(opts)
  opts = opts or {}
  local sid = opts.session_id or (not opts.new and state.current or nil)
  if sid and views[sid] and not opts.session_id then
    show(views[sid], opts.text)
  elseif sid then
    attach_and_show(sid, opts.text)
  elseif opts.new then
    create(opts.text)
  else
    client.call(methods.session_list, { workspace = config.workspace() }, function(result)
      local latest = result.sessions[1] -- the most recently updated first
      if latest then
        attach_and_show(latest.sessionId, opts.text)
      else
        create(opts.text)
      end
    end)
  end
end

--- Add a note to a session's chat (if it is open).
---@param session_id string
---@param text string
function M.note(session_id, text)
  local view = views[session_id]
  if view then
    model_ops.note(view.model, text)
    window.redraw(view)
  end
end

events.on("session_event", function(params)
  local view = views[params.sessionId]
  if not view then
    return
  end
  if params.kind == "messageAppended" and params.message then
    if model_ops.add_message(view.model, params.message) then
      window.redraw(view)
    end
  elseif params.kind == "titleChanged" then
    view.model.title = params.title or ""
    window.redraw(view)
  elseif params.kind == "deleted" then
    view.model.title = (view.model.title or "") .. " (deleted)"
    window.redraw(view)
  end
end)

events.on("chat_event", function(params)
  local pending = backlogs[params.sessionId]
  if pending then -- an attach is being answered: shown with the log it loads
    for _, backlog in ipairs(pending) do
      table.insert(backlog, params)
    end
    return
  end
  local view = views[params.sessionId]
  if not view then
    return
  end
  local was_tail = view.tail_is_text
  local change = model_ops.apply_event(view.model, params)
  view.queued[params.turnId] = nil -- started (or ended while it waited)
  if params.kind == "done" or params.kind == "error" or params.kind == "cancelled" then
    view.finished[params.turnId] = true
    if view.running == params.turnId then
      view.running = nil
    end
  elseif view.running == nil and not view.finished[params.turnId] then
    view.running = params.turnId
  end
  if change == "append" and was_tail then
    window.append_text(view, params.text or "")
    window.update_winbar(view)
  elseif change ~= "none" then
    window.redraw(view)
  end
end)

events.on("ctx_changed", function(params)
  local view = views[params.sessionId]
  if view and vim.api.nvim_buf_is_valid(view.buf) then
    window.update_winbar(view)
  end
end)

events.on("client_started", function()
  for sid in pairs(views) do
    M.attach(sid)
  end
end)

events.on("client_exited", function(params)
  for _, view in pairs(views) do
    if view.running and not params.expected then
      model_ops.note(view.model, "the daemon connection closed during this turn")
      view.running = nil
      window.redraw(view)
    end
  end
end)

return M
