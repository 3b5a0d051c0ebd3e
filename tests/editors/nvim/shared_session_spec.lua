-- requires: sim
-- Two Neovim instances attached to one session of the shared daemon: each
-- shows the messages (and replies) sent from the other.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local helpers_path = H.root .. "/tests/editors/nvim/helpers.lua"
local sid, buf, other

---@return string
local function text()
  return table.concat(H.lines(buf), "\n")
end

--- Run Lua in the second instance and return its result.
---@param code string
---@param ... any
---@return any
local function in_other(code, ...)
  return vim.rpcrequest(other, "nvim_exec_lua", code, { ... })
end

--- Wait (in the second instance) until its chat of `sid` contains `needle`.
---@param needle string
---@return string chat text
local function other_shows(needle)
  return H.other_chat_when(other, sid, needle)
end

H.test("a second Neovim attaches to the session by id", function()
  vim.cmd("Bonsai chat")
  sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  buf = H.wait(function()
    local b = vim.fn.bufnr("bonsai://chat/" .. sid)
    return b ~= -1 and b
  end, "the chat buffer")
  other = vim.fn.jobstart(
    { vim.v.progpath, "--embed", "--headless", "-u", "NONE", "-i", "NONE", "-n" },
    { rpc = true }
  )
  H.truthy(other > 0, "second instance started")
  in_other("dofile(...).load_plugin()", helpers_path)
  in_other("vim.cmd('Bonsai attach ' .. ...)", sid)
  H.contains(other_shows("# bonsai · "), "# bonsai · ")
end)

H.test("a message sent here shows, with its reply, in the other instance", function()
  require("bonsai.chat").send("hello from A", sid)
  H.wait(function()
    return text():find("Reply to A from the model.", 1, true)
  end, "the reply here", 20000)
  local there = other_shows("Reply to A from the model.")
  H.contains(there, "## You\nhello from A")
  H.contains(there, "## bonsai\nReply to A from the model.")
end)

H.test("a message sent from the other instance shows here", function()
  in_other("require('bonsai.chat').send('hello from B', ...)", sid)
  H.wait(function()
    return text():find("Reply to B from the model.", 1, true)
  end, "the other instance's message and reply here", 20000)
  H.contains(text(), "## You\nhello from B")
  H.contains(other_shows("Reply to B from the model."), "## You\nhello from B")
  H.eq(1, H.count(text(), "Reply to B from the model."), "shown once")
  vim.fn.jobstop(other)
end)

H.run()
