-- requires: sim
-- `:Bonsai chat` continues the workspace's latest session, as `bonsai chat` does
-- (a session started elsewhere, the CLI or another Neovim, is the one shown);
-- `:Bonsai chat new` starts one; a workspace without sessions gets a new one.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local client = require("bonsai.client")
local methods = require("bonsai.protocol").methods
local state = require("bonsai.state")
local workspace = require("bonsai.config").workspace()

local earlier

---@param sid string
---@return integer
local function chat_buf(sid)
  return vim.fn.bufnr("bonsai://chat/" .. sid)
end

--- A session of this workspace made as the CLI makes one, with one message in it.
---@param text string
---@return string
local function session_elsewhere(text)
  local created = client.request_sync(methods.session_create, { workspace = workspace }, 20000)
  local sid = created.sessionId
  local _, err = client.request_sync(
    methods.session_append,
    { sessionId = sid, role = "user", content = text },
    20000
  )
  H.eq(nil, err)
  return sid
end

--- `:Bonsai chat` and the session it settles on.
---@param args string?
---@return string
local function chat(args)
  local before = state.current
  vim.cmd("Bonsai chat" .. (args and (" " .. args) or ""))
  return H.wait(function()
    local now = state.current
    return now ~= before and now and chat_buf(now) ~= -1 and now
  end, "the chat of a session", 20000)
end

H.test(":Bonsai chat continues the workspace's latest session", function()
  H.truthy(client.ensure(), "the client starts")
  H.wait(client.is_ready, "the client ready", 20000)
  earlier = session_elsewhere("an older question")
  local latest = session_elsewhere("the question asked in the terminal")
  H.eq(nil, state.current, "this Neovim has used no session yet")
  H.eq(latest, chat(), "the latest session, not a new one")
  H.contains(H.lines(chat_buf(latest)), "the question asked in the terminal")
  H.eq(chat_buf(latest), vim.api.nvim_get_current_buf(), "its chat is the current buffer")
  local listed = client.request_sync(methods.session_list, { workspace = workspace }, 20000)
  H.eq(2, #listed.sessions, "no session was created")
end)

H.test(":Bonsai chat new starts a session", function()
  local before = state.current
  local fresh = chat("new")
  H.truthy(fresh ~= before and fresh ~= earlier, "a new session")
  H.eq({}, vim.tbl_filter(function(line)
    return line:find("question", 1, true) ~= nil
  end, H.lines(chat_buf(fresh))), "its chat is empty")
  local listed = client.request_sync(methods.session_list, { workspace = workspace }, 20000)
  H.eq(3, #listed.sessions)
end)

H.test("a workspace with no session gets a new one from :Bonsai chat", function()
  for _, s in ipairs(client.request_sync(methods.session_list, { workspace = workspace }).sessions) do
    client.request_sync(methods.session_delete, { sessionId = s.sessionId }, 20000)
  end
  state.current = nil
  local sid = chat()
  local listed = client.request_sync(methods.session_list, { workspace = workspace }, 20000)
  H.eq({ sid }, vim.tbl_map(function(s)
    return s.sessionId
  end, listed.sessions), "one new session")
end)

H.run()
