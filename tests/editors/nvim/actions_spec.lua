-- requires: sim
-- One-shot commands against the real daemon: compact previews; episodes
-- recall a turn's messages and search the transcript; presets and smol change
-- the daemon's effective settings.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local client = require("bonsai.client")
local methods = require("bonsai.protocol").methods
local panel = require("bonsai.panel")

local sid

---@return table effective context settings, from a separate request
local function context_settings()
  local ws = require("bonsai.config").workspace()
  return assert(client.request_sync(methods.config_get, { workspace = ws }, 20000)).effective.context
end

---@param seen {msg: string}[]
---@param needle string
local function wait_message(seen, needle)
  return H.wait(function()
    for _, n in ipairs(seen) do
      if n.msg:find(needle, 1, true) then
        return n.msg
      end
    end
  end, "a message containing " .. needle, 20000)
end

H.test(":Bonsai compact preview reports the token counts before and after", function()
  vim.cmd("Bonsai chat where is the parser")
  sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  H.wait(function()
    local view = require("bonsai.chat").view(sid)
    return view and vim.tbl_count(view.model.seen) >= 2 and view.running == nil
  end, "the turn to finish", 20000)
  local seen = H.capture_notify()
  vim.cmd("Bonsai compact preview")
  local msg = wait_message(seen, "compaction would take the context from ")
  H.truthy(msg:match("from [%d,]+ to [%d,]+ tokens %(%d+ events%)$"), msg)
end)

H.test("<CR> on an episode recalls its messages; / searches the session", function()
  vim.cmd("Bonsai episodes")
  local p = H.wait(function()
    local x = panel.get("bonsai://episodes/" .. sid)
    return x and x.result and #x.result.episodes > 0 and x
  end, "an episode listed")
  for lnum, ep in pairs(p.item_at) do
    if ep.number == 1 then
      vim.api.nvim_win_set_cursor(0, { lnum, 0 })
    end
  end
  vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
  local preview = H.wait(function()
    local b = vim.fn.bufnr("bonsai://recall/" .. sid)
    return b ~= -1 and b
  end, "the recall preview")
  H.contains(H.lines(preview), "## user (episode #1 · score 1.00)\nwhere is the parser")
  H.contains(H.lines(preview), "Noted: the parser lives in src/parse.py.")
  vim.cmd("close")
  vim.api.nvim_set_current_buf(p.buf)
  H.answer_input({ "parser" })
  vim.cmd("normal /")
  H.wait(function()
    local b = vim.fn.bufnr("bonsai://recall/" .. sid)
    return b ~= -1 and table.concat(H.lines(b), "\n"):find("src/parse.py", 1, true)
  end, "search results")
end)

H.test(":Bonsai preset save changes the daemon's effective preset", function()
  local seen = H.capture_notify()
  vim.cmd("Bonsai preset save")
  wait_message(seen, "bonsai: now using preset save, smol off")
  H.eq("save", context_settings().preset)
end)

H.test(":Bonsai smol toggles the small-model profile", function()
  local seen = H.capture_notify()
  vim.cmd("Bonsai smol")
  wait_message(seen, "smol on")
  H.eq(true, context_settings().smol)
  vim.cmd("Bonsai smol off")
  wait_message(seen, "smol off")
  H.eq(false, context_settings().smol)
  vim.cmd("Bonsai preset balanced")
  wait_message(seen, "now using preset balanced")
end)

H.run()
