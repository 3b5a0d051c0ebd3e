-- Sessions against the real daemon: the chat buffer shows a session's log and
-- follows it live; reconnecting reloads it; the picker and completion list it.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local client = require("bonsai.client")
local methods = require("bonsai.protocol").methods

local sid, title

---@return integer
local function chat_buf()
  return vim.fn.bufnr("bonsai://chat/" .. sid)
end

H.test(":Bonsai chat creates a session and opens its chat buffer", function()
  vim.cmd("Bonsai chat")
  sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  H.wait(function()
    return chat_buf() ~= -1
  end, "the chat buffer")
  H.eq(chat_buf(), vim.api.nvim_get_current_buf(), "the chat is the current buffer")
  H.eq("bonsai-chat", vim.bo.filetype)
  H.eq("nofile", vim.bo.buftype)
  title = client.request_sync(methods.session_attach, { sessionId = sid }).session.title
  H.eq({ "# bonsai · " .. title, "" }, H.lines(0))
end)

H.test("messages appended to the session appear in the chat", function()
  local _, err = client.request_sync(
    methods.session_append,
    { sessionId = sid, role = "user", content = "what is 2+2?" }
  )
  H.eq(nil, err)
  client.request_sync(
    methods.session_append,
    { sessionId = sid, role = "assistant", content = "4" }
  )
  H.wait(function()
    return table.concat(H.lines(chat_buf()), "\n"):find("## bonsai\n4", 1, true)
  end, "both messages rendered")
  H.eq(
    { "# bonsai · " .. title, "", "## You", "what is 2+2?", "", "## bonsai", "4", "" },
    H.lines(chat_buf())
  )
end)

H.test("a rename shows in the chat header", function()
  client.request_sync(methods.session_rename, { sessionId = sid, title = "arithmetic" })
  H.wait(function()
    return H.lines(chat_buf())[1] == "# bonsai · arithmetic"
  end, "the new title")
end)

H.test(":Bonsai restart reconnects and the chat reloads its log", function()
  local before = client.get().id
  vim.api.nvim_buf_call(chat_buf(), function()
    require("bonsai.ui").set_lines(chat_buf(), { "stale" })
  end)
  vim.cmd("Bonsai restart")
  H.wait(function()
    local c = client.get()
    return c and c.id ~= before and client.is_ready()
  end, "a new client", 20000)
  H.wait(function()
    return H.lines(chat_buf())[1] == "# bonsai · arithmetic"
  end, "the log reloaded after re-attaching")
  H.contains(H.lines(chat_buf()), "what is 2+2?")
end)

H.test(":Bonsai attach completes session ids", function()
  H.eq({ sid }, vim.fn.getcompletion("Bonsai attach " .. sid:sub(1, 4), "cmdline"))
end)

H.test(":Bonsai sessions lists this workspace's sessions and opens the pick", function()
  local asked = H.answer_select(function(items)
    return items[2]
  end)
  vim.cmd("only")
  vim.cmd("enew")
  vim.cmd("Bonsai sessions")
  H.wait(function()
    return #asked == 1
  end, "the picker")
  local labels = vim.tbl_map(asked[1].opts.format_item, asked[1].items)
  H.eq("+ new session", labels[1])
  H.contains(labels[2], "arithmetic · 2 messages · ")
  H.wait(function()
    return vim.api.nvim_get_current_buf() == chat_buf()
  end, "the picked chat shown")
end)

H.test("wiping the chat buffer detaches from the session", function()
  local buf = chat_buf()
  vim.cmd("bwipeout! " .. buf)
  H.eq(nil, require("bonsai.chat").view(sid))
  local _, err = client.request_sync(
    methods.session_append,
    { sessionId = sid, role = "user", content = "later" }
  )
  H.eq(nil, err)
  H.eq(-1, chat_buf())
end)

H.run()
