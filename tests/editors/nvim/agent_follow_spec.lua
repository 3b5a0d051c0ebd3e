-- requires: sim
-- The chat and the editor follow the agent, with a second daemon client in
-- this Neovim standing in for another editor window: an approval answered
-- there closes the prompt here at once and the chat says who answered; the
-- edited file's open (unmodified) buffer shows the change without
-- :checktime, and so does a hidden one; recalled memory is a "recalled" chip, not a user message; an
-- intraword `_` is not highlighted as a markdown error.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()
vim.cmd("syntax on")

local approval = require("bonsai.approval")
local sid, buf, other_id
local other_saw = {}

---@return string
local function text()
  return table.concat(H.lines(buf), "\n")
end

---@return integer? the approval prompt float
local function prompt_float()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then
      return w
    end
  end
end

--- A second client of the daemon ("VS Code"): it approves once the prompt
--- here is on screen.
local function start_other()
  other_id = vim.lsp.start({
    name = "other-window",
    cmd = { "bonsai", "connect" },
    root_dir = vim.fn.getcwd(),
    init_options = { client = "vscode" },
    handlers = {
      ["bonsai/approval/request"] = function(_, params)
        local co = coroutine.running()
        local timer = assert(vim.uv.new_timer())
        timer:start(20, 20, vim.schedule_wrap(function()
          if prompt_float() and vim.fn.bufnr("bonsai://approval/diff") ~= -1 then
            timer:stop()
            timer:close()
            coroutine.resume(co)
          end
        end))
        coroutine.yield()
        table.insert(other_saw, params)
        return { approved = true }
      end,
    },
  }, { attach = false })
  H.wait(function()
    local c = vim.lsp.get_client_by_id(other_id)
    return c and c.initialized
  end, "the other client")
end

H.test("an edit approved in another window closes the prompt here; the open buffer follows", function()
  vim.fn.writefile({ "def test_total():", "    assert total([]) == 0" }, "test_cart.py")
  vim.cmd.edit("test_cart.py")
  local file_buf = vim.api.nvim_get_current_buf()
  vim.cmd("Bonsai chat")
  sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  buf = H.wait(function()
    local b = vim.fn.bufnr("bonsai://chat/" .. sid)
    return b ~= -1 and b
  end, "the chat buffer")
  start_other()
  local attached = false
  vim.lsp.get_client_by_id(other_id):request("bonsai/session/attach", { sessionId = sid }, function()
    attached = true
  end)
  H.wait(function()
    return attached
  end, "the other client attached")
  local notes = H.capture_notify()
  require("bonsai.chat").send("add a test for quantities", sid)
  H.wait(function()
    return text():find("Added `test_total_counts_quantity`", 1, true)
  end, "the reply after the edit", 30000)
  H.eq(1, #other_saw, "the other window was asked too")
  H.eq(0, approval.count(), "nothing is pending here")
  H.eq(nil, prompt_float(), "the prompt here was closed")
  H.eq(-1, vim.fn.bufnr("bonsai://approval/diff"), "the review split was closed")
  H.contains(approval.trace, "closed")
  local who = "VS Code window"
  H.contains(text(), "» approved edit_file in " .. who)
  H.not_contains(text(), "» rejected")
  H.truthy(vim.iter(notes):any(function(n)
    return n.msg:find("approved edit_file in " .. who, 1, true) ~= nil
  end), "a notification says it was answered elsewhere")
  H.wait(function()
    return table.concat(H.lines(file_buf), "\n"):find("def test_total_counts_quantity", 1, true)
  end, "the open buffer to show the agent's edit")
  H.eq(false, vim.bo[file_buf].modified)
end)

H.test("a hidden buffer of an edited file follows too", function()
  vim.fn.writefile({ "teh cat sat on the mat" }, "notes.txt")
  local hidden = vim.fn.bufadd("notes.txt")
  vim.fn.bufload(hidden)
  vim.bo[hidden].buflisted = true
  H.eq(-1, vim.fn.bufwinid(hidden), "the buffer is loaded but in no window")
  H.eq("teh cat sat on the mat", H.lines(hidden)[1])
  require("bonsai.chat").send("fix the typo in notes.txt", sid)
  H.wait(function()
    return text():find("Fixed the typo in notes.txt.", 1, true)
  end, "the reply after the edit", 30000)
  H.eq("the cat sat on the mat", H.wait(function()
    local first = H.lines(hidden)[1]
    return first ~= "teh cat sat on the mat" and first
  end, "the hidden buffer to show the agent's edit"))
  H.eq(-1, vim.fn.bufwinid(hidden), "still hidden")
  H.eq(false, vim.bo[hidden].modified)
end)

H.test("recalled memory is a folded chip on the turn", function()
  vim.fn.mkdir(".bonsai/memory", "p")
  vim.fn.writefile({
    "---",
    "name: deploy-checklist",
    "description: How this project deploys to staging",
    "type: project",
    "---",
    "Deploys to staging go through make deploy_staging.",
  }, ".bonsai/memory/deploy-checklist.md")
  require("bonsai.chat").send("how do we deploy to staging?", sid)
  H.wait(function()
    return text():find("Deploys go through make deploy_staging.", 1, true)
  end, "the reply", 30000)
  H.contains(text(), "▸ recalled: deploy-checklist (memory)")
  H.not_contains(text(), "<background-data")
  H.eq(3, H.count(text(), "## You"), "three questions, no fourth user message")
end)

H.test("an intraword underscore in the chat is not a markdown error", function()
  local win = vim.fn.bufwinid(buf)
  local lnum, col
  for i, line in ipairs(H.lines(buf)) do
    local at = line:find("to test_cart.py", 1, true) -- outside the code span
    if line:find("^Added") and at then
      lnum, col = i, at + #"to test"
    end
  end
  H.truthy(lnum, "the identifier is in the chat")
  vim.api.nvim_win_call(win, function()
    local id = vim.fn.synID(lnum, col, 1)
    local name = vim.fn.synIDattr(vim.fn.synIDtrans(id), "name")
    H.truthy(vim.fn.synIDattr(id, "name") ~= "markdownError", "not markdownError")
    H.truthy(name ~= "Error", "not highlighted as an error: " .. name)
  end)
end)

H.run()
