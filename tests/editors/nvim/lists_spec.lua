-- Episodes and memory lists against the real daemon: they render, a fact
-- remembered with :Bonsai remember shows up, t disables it, <CR> opens its
-- file and x forgets it after asking.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local client = require("bonsai.client")
local methods = require("bonsai.protocol").methods
local panel = require("bonsai.panel")

H.test(":Bonsai episodes renders the session's episode list", function()
  local created =
    assert(client.request_sync(methods.session_create, { workspace = vim.uv.cwd() }, 20000))
  require("bonsai.state").set_current(created.sessionId)
  vim.cmd("Bonsai episodes")
  local p = H.wait(function()
    local x = panel.get("bonsai://episodes/" .. created.sessionId)
    return x and x.result and x
  end, "the episode list")
  local lines = H.lines(p.buf)
  H.eq("Episodes   (<CR> recall · / search · r restore · R refresh)", lines[1])
  H.eq(#p.result.episodes, vim.tbl_count(p.item_at), "one line per episode")
end)

H.test(":Bonsai remember adds a project fact that :Bonsai memory lists", function()
  local seen = H.capture_notify()
  vim.cmd("Bonsai remember project The build uses tox for every test run")
  H.wait(function()
    return #seen > 0
  end, "a confirmation")
  H.contains(seen[1].msg, "bonsai: remembered ")
  vim.cmd("Bonsai memory")
  local p = H.wait(function()
    local x = panel.get("bonsai://memory")
    return x and x.result and x
  end, "the memory list")
  local lines = H.lines(p.buf)
  H.contains(lines[1], "Memory · 1 entry · embeddings: ")
  H.contains(lines, "● project ")
  local entry = p.result.entries[1]
  H.eq("project", entry.tier)
  H.truthy(vim.uv.fs_stat(entry.path), "the entry's file exists: " .. entry.path)
end)

--- Put the cursor on the memory entry `name`.
---@param p bonsai.Panel
---@param name string
local function cursor_on(p, name)
  for lnum, entry in pairs(p.item_at) do
    if entry.name == name then
      vim.api.nvim_win_set_cursor(vim.fn.bufwinid(p.buf), { lnum, 0 })
    end
  end
end

H.test("t disables the entry for retrieval in the daemon", function()
  local p = assert(panel.get("bonsai://memory"))
  local name = p.result.entries[1].name
  vim.api.nvim_set_current_win(vim.fn.bufwinid(p.buf))
  cursor_on(p, name)
  vim.cmd("normal t")
  H.wait(function()
    local listed =
      client.request_sync(methods.memory_list, { workspace = require("bonsai.config").workspace() })
    return listed and listed.entries[1].enabled == false
  end, "the daemon to disable the entry")
  H.wait(function()
    return table.concat(H.lines(p.buf), "\n"):find("○ project ", 1, true)
  end, "the list to show it disabled")
end)

H.test("<CR> opens the entry's markdown file in the previous window", function()
  local p = assert(panel.get("bonsai://memory"))
  local entry = p.result.entries[1]
  vim.api.nvim_set_current_win(vim.fn.bufwinid(p.buf))
  cursor_on(p, entry.name)
  vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
  H.eq(vim.uv.fs_realpath(entry.path), vim.uv.fs_realpath(vim.api.nvim_buf_get_name(0)))
  H.contains(H.lines(0), "The build uses tox for every test run")
  H.truthy(vim.api.nvim_get_current_win() ~= vim.fn.bufwinid(p.buf), "opened outside the list")
end)

H.test("x forgets the entry under the cursor after confirming", function()
  local p = assert(panel.get("bonsai://memory"))
  local name = p.result.entries[1].name
  vim.api.nvim_set_current_win(vim.fn.bufwinid(p.buf))
  cursor_on(p, name)
  local asked = H.answer_select(function(items)
    return items[1]
  end)
  vim.cmd("normal x")
  H.wait(function()
    return #asked == 1
  end, "the confirmation prompt")
  H.contains(asked[1].opts.prompt, ('Forget memory "%s"'):format(name))
  H.wait(function()
    local listed =
      client.request_sync(methods.memory_list, { workspace = require("bonsai.config").workspace() })
    return listed and #listed.entries == 0
  end, "the daemon to forget the entry")
  H.wait(function()
    return table.concat(H.lines(p.buf), "\n"):find("(no entries", 1, true)
  end, "the list to refresh")
end)

H.test("a in the memory list asks for the fact, then which tier keeps it", function()
  local p = assert(panel.get("bonsai://memory"))
  vim.api.nvim_set_current_win(vim.fn.bufwinid(p.buf))
  H.answer_input({ "Releases are tagged vX.Y.Z" })
  local asked = H.answer_select(function(items)
    return items[2]
  end)
  local seen = H.capture_notify()
  vim.api.nvim_feedkeys("a", "x", false)
  H.wait(function()
    return #seen > 0
  end, "a confirmation")
  H.eq("Remember where?", asked[1].opts.prompt)
  H.contains(asked[1].items[1], "Project memory")
  H.contains(asked[1].items[2], "User memory")
  H.contains(seen[1].msg, "(user)")
  local listed = assert(client.request_sync(methods.memory_list, { workspace = vim.uv.cwd() }, 20000))
  local tiers = {}
  for _, e in ipairs(listed.entries) do
    tiers[e.tier] = (tiers[e.tier] or 0) + 1
  end
  H.eq(1, tiers.user, "the new fact went to user memory, as chosen")
end)

H.run()
