-- requires: sim
-- :checkhealth bonsai against a real daemon reports it OK with its version,
-- the configured provider and the memory embeddings state.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
-- health's blocking requests wait 10 s by default; starting the daemon on a loaded
-- machine can take longer (a ceiling, not a pause)
vim.g.bonsai = { request_timeout_ms = 60000 }
H.load_plugin()

---@return string[]
local function checkhealth()
  vim.cmd("checkhealth bonsai")
  return H.lines(0)
end

H.test("a reachable daemon is reported OK with its version and provider", function()
  local lines = checkhealth()
  local version = require("bonsai.protocol").version
  H.contains(lines, "OK found `bonsai`")
  H.contains(lines, ("OK daemon %s is running (pid "):format(version))
  H.contains(lines, "OK provider sim, model gpt-4o-mini at " .. vim.env.BONSAI_BASE_URL)
  H.contains(lines, "entries; embeddings: ")
  H.not_contains(lines, "ERROR")
  H.eq(0, #vim.lsp.get_clients({ name = "bonsai" }), "the probe left no client behind")
end)

H.test("with the plugin connected, health reuses its client", function()
  H.truthy(
    require("bonsai.client").request_sync(
      require("bonsai.protocol").methods.daemon_status,
      {},
      60000
    ),
    "status"
  )
  local lines = checkhealth()
  H.contains(lines, "using the running bonsai client")
  H.contains(lines, "clients, ")
  H.not_contains(lines, "ERROR")
end)

H.run()
