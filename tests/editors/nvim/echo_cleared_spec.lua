-- requires: sim
-- The command line does not keep a stale bonsai message: "starting a new session…" is
-- replaced once the session's chat is open.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local shown = {} -- what the message line shows, in order ("" when cleared)
local ns = vim.api.nvim_create_namespace("bonsai-spec-messages")
vim.ui_attach(ns, { ext_messages = true }, function(event, ...)
  if event == "msg_show" then
    local _, content = ...
    local text = table.concat(vim.tbl_map(function(chunk)
      return chunk[2]
    end, content))
    table.insert(shown, text)
  elseif event == "msg_clear" then
    table.insert(shown, "")
  end
end)

H.test("the 'starting a new session…' line is replaced once the chat is open", function()
  vim.cmd("Bonsai chat")
  local sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  H.wait(function()
    return vim.fn.bufnr("bonsai://chat/" .. sid) ~= -1
  end, "the chat buffer")
  H.wait(function()
    return vim.tbl_contains(shown, "bonsai: starting a new session…")
  end, "the starting line shown", 5000)
  H.wait(function()
    return shown[#shown] ~= "bonsai: starting a new session…"
  end, "the starting line replaced", 5000)
end)

H.run()
