-- doc/bonsai.txt: tags build without duplicates, every |link| resolves, and
-- :help finds the command's topics.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local doc = H.plugin_dir .. "/doc/bonsai.txt"
local tmp = vim.fn.tempname()
vim.fn.mkdir(tmp .. "/doc", "p")
vim.fn.writefile(vim.fn.readfile(doc), tmp .. "/doc/bonsai.txt")

---@param path string
---@return table<string, true>
local function read_tags(path)
  local tags = {}
  for _, line in ipairs(vim.fn.readfile(path)) do
    tags[line:match("^([^\t]+)")] = true
  end
  return tags
end

H.test(":helptags accepts the help file (no duplicate tags)", function()
  vim.cmd.helptags(vim.fn.fnameescape(tmp .. "/doc"))
  local tags = read_tags(tmp .. "/doc/tags")
  for _, tag in ipairs({
    "bonsai",
    ":Bonsai",
    ":Bonsai-chat",
    ":Bonsai-ctx",
    "bonsai-config",
    "g:bonsai",
    "bonsai-ledger-keys",
    "bonsai-health",
    "bonsai.statusline()",
  }) do
    H.truthy(tags[tag], "missing tag " .. tag)
  end
end)

H.test("every :Bonsai subcommand has a help tag", function()
  local tags = read_tags(tmp .. "/doc/tags")
  for _, name in ipairs(require("bonsai.commands").names()) do
    H.truthy(tags[":Bonsai-" .. name], "no help for :Bonsai " .. name)
  end
end)

H.test("every |link| points at a tag of this file or of Neovim", function()
  local ours = read_tags(tmp .. "/doc/tags")
  local theirs = read_tags(vim.env.VIMRUNTIME .. "/doc/tags")
  local text = table.concat(vim.fn.readfile(doc), "\n")
  local count = 0
  for link in text:gmatch("|([^|%s]+)|") do
    count = count + 1
    H.truthy(ours[link] or theirs[link], "unresolved link |" .. link .. "|")
  end
  H.truthy(count > 20, "links were found")
end)

H.test(":help opens the topics", function()
  vim.opt.rtp:prepend(tmp)
  vim.cmd("help :Bonsai-ctx")
  H.eq("help", vim.bo.buftype)
  H.contains(vim.api.nvim_get_current_line(), "*:Bonsai-ctx*")
  vim.cmd("help bonsai-ledger-keys")
  H.contains(H.lines(0), "pin the node (never collected)")
end)

H.run()
