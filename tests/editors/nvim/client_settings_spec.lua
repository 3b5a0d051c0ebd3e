-- requires: sim
-- Issue 20: a daemon started earlier keeps its own environment, yet the next
-- chat from this Neovim uses the provider this Neovim was started with. The
-- daemon is started by `bonsai status` with the harness simulator; this
-- Neovim then points BONSAI_BASE_URL at a second simulator it starts itself.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")

local daemon_url = vim.env.BONSAI_BASE_URL
local second, second_url

H.test("a daemon is already running, started by `bonsai status` before this editor", function()
  local script = vim.fn.tempname() .. ".json"
  vim.fn.writefile({ vim.json.encode({ steps = { { text = "Hello from the second simulator." } } }) }, script)
  second = vim.system(
    { "python", "-m", "bonsai.sim", "--port", "0", "--script", script },
    {
      stdout = function(_, data)
        second_url = second_url or (data and data:match("OpenAI base URL (%S-)[,)]"))
      end,
    }
  )
  local status = vim.system({ "bonsai", "status" }, { text = true }):wait(30000)
  H.eq(0, status.code, status.stderr)
  H.contains(status.stderr, "no daemon was running; started one")
  H.wait(function()
    return second_url
  end, "the second simulator", 20000)
  H.truthy(second_url ~= daemon_url, "two simulators")
end)

H.test("the next chat uses this editor's BONSAI_BASE_URL, on the running daemon", function()
  vim.env.BONSAI_BASE_URL = second_url -- as if Neovim had been started with it
  H.load_plugin()
  vim.cmd("Bonsai chat")
  local sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  require("bonsai.chat").send("hi", sid)
  local buf = vim.fn.bufnr("bonsai://chat/" .. sid)
  H.wait(function()
    return table.concat(H.lines(buf), "\n"):find("Hello from the second simulator.", 1, true)
  end, "the second simulator's reply", 20000)
  H.not_contains(table.concat(H.lines(buf), "\n"), "daemon's own simulator")
  local client = require("bonsai.client")
  local status = client.request_sync(require("bonsai.protocol").methods.daemon_status, {})
  H.eq(1, #status.sessionProviders, "one session with this editor's settings")
  local choice = status.sessionProviders[1].choice
  H.eq(second_url, choice.baseUrl)
  H.truthy(vim.startswith(choice.sources.base_url, "Neovim (pid"), vim.inspect(choice.sources))
  H.eq(daemon_url, status.provider.baseUrl, "the daemon's own default is unchanged")
end)

H.test("a setting that cannot apply is a warning naming it, and creates no session", function()
  local seen = H.capture_notify()
  vim.env.BONSAI_PROVIDER = "opneai"
  require("bonsai.chat").open({ new = true })
  H.wait(function()
    return #seen > 0
  end, "a notification", 20000)
  H.eq(vim.log.levels.WARN, seen[1].level)
  H.contains(seen[1].msg, "unknown provider 'opneai' (BONSAI_PROVIDER")
  local client = require("bonsai.client")
  local listed = client.request_sync(require("bonsai.protocol").methods.session_list, {})
  H.eq(1, #listed.sessions, "no second session")
end)

H.test("the second simulator stops", function()
  second:kill(15)
  H.truthy(second:wait(10000), "exited")
end)

H.run()
