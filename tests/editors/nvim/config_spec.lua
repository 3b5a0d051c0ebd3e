-- Options: defaults without setup(), vim.g.bonsai (table or function),
-- setup() merging, and clear errors with defaults for invalid values.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local config = require("bonsai.config")

H.test("defaults apply when nothing is configured", function()
  vim.g.bonsai = nil
  local cfg, errors = config.resolve()
  H.eq({}, errors)
  H.eq({ "bonsai", "connect" }, cfg.cmd)
  H.eq("vertical", cfg.chat.split)
  H.eq("p", cfg.ledger.keys.pin)
end)

H.test("vim.g.bonsai as a table overrides single keys and keeps the rest", function()
  vim.g.bonsai = { chat = { size = 100, keys = { cancel = false } } }
  local cfg, errors = config.resolve()
  H.eq({}, errors)
  H.eq(100, cfg.chat.size)
  H.eq(false, cfg.chat.keys.cancel)
  H.eq("<CR>", cfg.chat.keys.send, "untouched sibling key")
  H.eq("vertical", cfg.chat.split)
end)

H.test("vim.g.bonsai may be a function returning the options", function()
  vim.g.bonsai = function()
    return { cmd = { "/opt/bonsai/bin/bonsai", "connect" } }
  end
  H.eq({ "/opt/bonsai/bin/bonsai", "connect" }, config.get().cmd)
  vim.g.bonsai = nil
end)

H.test("invalid values are named, explained and replaced by the defaults", function()
  local cfg, errors = config.resolve({
    cmd = "bonsai connect",
    chat = { split = "diagonal", size = -3, keys = { send = 42, nope = "x" } },
    ledger = { view = "tree", size = 50 },
    statusline = { format = "%q %q" },
    colour = "green",
  })
  H.eq({
    "chat.keys.send: expected a key (string) or false, got 42",
    "chat.size: expected a positive integer, got -3",
    'chat.split: expected one of vertical, horizontal, tab, current, float, got "diagonal"',
    "cmd: expected a non-empty list of strings, e.g. { 'bonsai', 'connect' }, got \"bonsai connect\"",
    'ledger.view: expected one of ledger, wire, turns, got "tree"',
    "statusline.format: expected a string.format pattern taking one number, e.g. 'ctx %d%%', got \"%q %q\"",
    "unknown key action `chat.keys.nope`",
    "unknown option `colour`",
  }, errors)
  H.eq("vertical", cfg.chat.split, "default kept for the invalid value")
  H.eq({ "bonsai", "connect" }, cfg.cmd)
  H.eq(50, cfg.ledger.size, "valid sibling still applied")
end)

H.test("config.get() reports each problem once, as an error", function()
  local seen = H.capture_notify()
  vim.g.bonsai = { chat = { size = "wide" } }
  config.get()
  config.get()
  H.eq(1, #seen)
  H.eq(vim.log.levels.ERROR, seen[1].level)
  H.contains(seen[1].msg, 'chat.size: expected a positive integer, got "wide"')
  vim.g.bonsai = nil
end)

H.test("setup() merges into vim.g.bonsai and rejects a non-table", function()
  vim.g.bonsai = { chat = { size = 70 } }
  require("bonsai").setup({ ledger = { size = 40 } })
  H.eq(70, vim.g.bonsai.chat.size)
  H.eq(40, config.get().ledger.size)
  local seen = H.capture_notify()
  require("bonsai").setup("fast")
  H.contains(seen[1].msg, "setup(opts): expected table")
  vim.g.bonsai = nil
end)

H.test("the workspace is the git root above the cwd, or the cwd", function()
  local tmp = vim.fn.tempname()
  vim.fn.mkdir(tmp .. "/repo/.git", "p")
  vim.fn.mkdir(tmp .. "/repo/src/deep", "p")
  vim.fn.mkdir(tmp .. "/plain", "p")
  local real = vim.uv.fs_realpath(tmp)
  vim.cmd.cd(tmp .. "/repo/src/deep")
  H.eq(real .. "/repo", config.workspace())
  vim.cmd.cd(tmp .. "/plain")
  H.eq(real .. "/plain", config.workspace())
  H.eq("/srv/project", config.workspace({ workspace = "/srv/project/" }))
end)

H.run()
