-- bonsai: the `:Bonsai` command and <Plug> mappings. Everything else is
-- loaded on first use; no setup() call is needed.

if vim.g.loaded_bonsai then
  return
end
vim.g.loaded_bonsai = true

if vim.fn.has("nvim-0.10") ~= 1 then
  vim.notify("bonsai needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

vim.api.nvim_create_user_command("Bonsai", function(opts)
  require("bonsai.commands").run(opts.fargs)
end, {
  nargs = "*",
  desc = "bonsai: chat, context ledger, episodes, memory",
  complete = function(arglead, cmdline)
    return require("bonsai.commands").complete(arglead, cmdline)
  end,
})

---@type table<string, {[1]: string, [2]: fun()}>
local plugs = {
  chat = {
    "open the chat",
    function()
      require("bonsai.chat").open()
    end,
  },
  send = {
    "send a message",
    function()
      require("bonsai.chat").prompt()
    end,
  },
  cancel = {
    "cancel the running turn",
    function()
      require("bonsai.chat").cancel()
    end,
  },
  ctx = {
    "open the context ledger",
    function()
      require("bonsai.ledger").open()
    end,
  },
  episodes = {
    "list episodes",
    function()
      require("bonsai.episodes").open()
    end,
  },
  memory = {
    "list memory",
    function()
      require("bonsai.memory").open()
    end,
  },
  rules = {
    "list rules",
    function()
      require("bonsai.rules").open()
    end,
  },
  compact = {
    "compact the context now",
    function()
      require("bonsai.actions").compact({})
    end,
  },
  sessions = {
    "pick a session",
    function()
      require("bonsai.actions").pick_session()
    end,
  },
  smol = {
    "toggle smol mode",
    function()
      require("bonsai.actions").smol("toggle")
    end,
  },
}

for name, spec in pairs(plugs) do
  vim.keymap.set("n", ("<Plug>(bonsai-%s)"):format(name), spec[2], { desc = "bonsai: " .. spec[1] })
end

-- <Esc> first so that '< and '> mark the selection just made
vim.keymap.set(
  "x",
  "<Plug>(bonsai-send-selection)",
  "<Esc><Cmd>lua require('bonsai.chat').send_selection()<CR>",
  { desc = "bonsai: ask about the selected lines" }
)
