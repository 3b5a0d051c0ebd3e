-- requires: sim
-- A message sent while a reply streams waits for it; cancelling the streaming turn ends
-- it as cancelled (not an error) and the waiting message is answered next, once.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local chat = require("bonsai.chat")

H.test("cancel ends the streaming turn and the message sent behind it is answered", function()
  local sid, buf = H.open_chat()
  local function text()
    return table.concat(H.lines(buf), "\n")
  end
  chat.send("the first question", sid)
  H.wait(function()
    return text():find("w010", 1, true)
  end, "the first reply streaming", 30000)
  local first_turn = H.wait(function()
    return chat.view(sid).running
  end, "the first turn running")
  chat.send("the second question", sid)
  local second_turn = H.wait(function()
    return next(chat.view(sid).queued)
  end, "the second turn known, waiting")
  H.truthy(second_turn ~= first_turn, "a turn of its own")
  H.eq(first_turn, chat.view(sid).running, "the streaming turn is still the running one")
  chat.cancel(sid)
  H.wait(function()
    return text():find("Reply to the second question.", 1, true)
  end, "the second message answered", 30000)
  H.wait(function()
    return chat.view(sid).running == nil
  end, "no turn running once it is answered", 30000)
  local shown = text()
  H.not_contains(shown, "end-of-reply") -- the first reply was cut where it was cancelled
  H.contains(shown, "cancelled")
  H.eq(1, H.count(shown, "Reply to the second question."), "answered once")
  H.eq(1, H.count(shown, "## You\nthe second question"), "the second message shown once")
  local cancelled_at = shown:find("cancelled", 1, true)
  local second_at = shown:find("Reply to the second question.", 1, true)
  H.truthy(cancelled_at < second_at, "the cancel shows before the next reply")
  H.truthy(chat.view(sid).finished[first_turn], "the first turn is finished in the view")
  H.truthy(chat.view(sid).finished[second_turn], "and the second")
  H.eq(nil, next(chat.view(sid).queued), "nothing left waiting")
end)

H.run()
