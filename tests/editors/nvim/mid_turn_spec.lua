-- requires: sim
-- A second Neovim attached while a turn streams: it shows the turn so far from its
-- first word (the events the daemon sends with the attach answer) while the turn is
-- still streaming, the finished tool step once, and the rest as it comes.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local helpers_path = H.root .. "/tests/editors/nvim/helpers.lua"

---@param buf integer
---@return string
local function text_of(buf)
  return table.concat(H.lines(buf), "\n")
end

H.test("a Neovim attached mid-reply shows the reply from its first word, once", function()
  local sid, buf = H.open_chat()
  require("bonsai.chat").send("look, then talk", sid)
  H.wait(function()
    return text_of(buf):find("w010", 1, true)
  end, "the reply streaming here", 30000)
  H.not_contains(text_of(buf), "end-of-reply")
  local other = vim.fn.jobstart(
    { vim.v.progpath, "--embed", "--headless", "-u", "NONE", "-i", "NONE", "-n" },
    { rpc = true }
  )
  H.truthy(other > 0, "second instance started")
  vim.rpcrequest(other, "nvim_exec_lua", "dofile(...).load_plugin()", { helpers_path })
  -- attached twice at once (a reconnect's attach and the user's): each answer is
  -- loaded with the turn's events sent with it
  vim.rpcrequest(
    other,
    "nvim_exec_lua",
    "vim.cmd('Bonsai attach ' .. ...); vim.cmd('Bonsai attach ' .. ...)",
    { sid }
  )
  -- the other's chat as soon as it shows the reply's first word
  local first = H.other_chat_when(other, sid, "w001")
  H.contains(first, "w001 w002")
  H.not_contains(first, "end-of-reply") -- shown while streaming, not only from the stored reply
  H.contains(first, "Looking first.")
  local last = H.other_chat_when(other, sid, "end-of-reply")
  H.eq(1, H.count(last, "w001 "), "the reply shown once")
  H.eq(1, H.count(last, "Looking first."), "the finished step shown once")
  H.eq(1, H.count(last, "w150 w151"), "nothing of the streamed part twice")
  vim.fn.jobstop(other)
end)

H.run()
