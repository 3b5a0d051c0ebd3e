---@mod bonsai.approval Answer `bonsai/approval/request`
---
--- The daemon asks every attached client before an edit or a command runs;
--- the first answer wins and every client then hears
--- `bonsai/approval/resolved`. Here an approval is:
---   1. announced (a notification and |bonsai.statusline()|),
---   2. reviewed: the diff of an edit (or a command and its directory) is
---      drawn in a preview split, and the screen redrawn,
---   3. asked, after that redraw: in a small float (`a` approve, `r` reject)
---      or with |vim.ui.select()| (`approval.prompt = "select"`),
---   4. closed at once when another window answered first; a late answer
---      from here is refused with a message, never sent as if it counted.
--- The request handler runs inside a coroutine (see `vim.lsp.rpc`), so it
--- waits without blocking Neovim.

local M = {}

M.APPROVE = "Approve"
M.REJECT = "Reject"

---@class bonsai.PendingApproval
---@field params bonsai.ApprovalRequestParams
---@field preview integer? bufnr of the review split
---@field prompt_win integer? the float asking
---@field settled boolean answered here or elsewhere
---@field resume fun(choice: string?)?

---@type table<string, bonsai.PendingApproval>
M.pending = {}
--- What happened, in order, for the specs: "review", "redraw", "prompt", "closed".
---@type string[]
M.trace = {}
local counter = 0

---@return integer
function M.count()
  return vim.tbl_count(M.pending)
end

--- What the call changes, in a few words: the file of an edit, the command.
---@param params bonsai.ApprovalRequestParams
---@return string
function M.subject(params)
  local args = params.args or {}
  if params.path then
    return ("%s on %s"):format(params.tool, params.path)
  end
  if params.tool == "bash" and type(args.command) == "string" then
    return ("`%s`"):format(args.command:gsub("\n", "⏎"))
  end
  local summary = require("bonsai.chat_render").args_summary(args)
  return ("%s(%s)"):format(params.tool, summary)
end

--- The question shown to the user.
---@param params bonsai.ApprovalRequestParams
---@return string
function M.question(params)
  local where = params.cwd and (" in " .. vim.fn.fnamemodify(params.cwd, ":~")) or ""
  return ("bonsai wants to run %s%s"):format(M.subject(params), where)
end

---@param path string workspace-relative
---@return integer? bufnr of a loaded buffer with unsaved changes to it
local function modified_buffer(path)
  local target = vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= "" and vim.fs.normalize(name) == target then
        return buf
      end
    end
  end
  return nil
end

--- The review lines: the diff, or the command and where it runs.
---@param params bonsai.ApprovalRequestParams
---@return string[] lines
---@return string filetype
local function review_lines(params)
  local ui = require("bonsai.ui")
  local lines = {}
  if params.path and modified_buffer(params.path) then
    table.insert(
      lines,
      ("! %s has unsaved changes in this Neovim: save or discard them first"):format(params.path)
    )
  end
  if params.diff and params.diff ~= "" and params.tool ~= "bash" then
    vim.list_extend(lines, ui.lines(params.diff))
    return lines, "diff"
  end
  if params.tool == "bash" then
    local args = params.args or {}
    table.insert(lines, "$ " .. tostring(args.command or ""))
    table.insert(lines, "# runs in " .. (params.cwd or "the workspace"))
    return lines, "sh"
  end
  return lines, "diff"
end

---@param params bonsai.ApprovalRequestParams
---@return integer? bufnr of the review split
local function show_review(params)
  local lines, filetype = review_lines(params)
  if #lines == 0 then
    return nil
  end
  local ui = require("bonsai.ui")
  local back = vim.api.nvim_get_current_win()
  local buf = ui.preview("bonsai://approval/diff", lines, filetype)
  vim.wo[vim.fn.bufwinid(buf)][0].wrap = false
  if vim.api.nvim_win_is_valid(back) then
    vim.api.nvim_set_current_win(back) -- show the diff, keep the cursor where it was
  end
  table.insert(M.trace, "review")
  return buf
end

---@param entry bonsai.PendingApproval
local function close_windows(entry)
  if entry.prompt_win and vim.api.nvim_win_is_valid(entry.prompt_win) then
    vim.api.nvim_win_close(entry.prompt_win, true)
  end
  entry.prompt_win = nil
  if entry.preview and vim.api.nvim_buf_is_valid(entry.preview) then
    vim.api.nvim_buf_delete(entry.preview, { force = true })
  end
  entry.preview = nil
end

--- A small float under the review, focused, with `a`/`r` to answer.
---@param entry bonsai.PendingApproval
---@param answer fun(choice: string?)
local function float_prompt(entry, answer)
  local text = {
    " " .. M.question(entry.params),
    " a approve · r reject" .. (entry.preview and " · the diff is in the split above" or ""),
  }
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, text)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  local width = 20
  for _, line in ipairs(text) do
    width = math.max(width, vim.fn.strdisplaywidth(line) + 1)
  end
  width = math.min(width, math.max(20, vim.o.columns - 4))
  entry.prompt_win = vim.api.nvim_open_win(buf, true, {
    relative = "editor",
    row = math.max(0, vim.o.lines - #text - 4),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = #text,
    style = "minimal",
    border = "rounded",
    title = " bonsai approval ",
  })
  vim.wo[entry.prompt_win].wrap = true
  local function map(lhs, choice)
    vim.keymap.set("n", lhs, function()
      answer(choice)
    end, { buffer = buf, nowait = true, desc = "bonsai: " .. (choice or "reject") })
  end
  map("a", M.APPROVE)
  map("r", M.REJECT)
  map("q", M.REJECT)
  map("<Esc>", M.REJECT)
end

---@param entry bonsai.PendingApproval
---@param answer fun(choice: string?)
local function ask(entry, answer)
  table.insert(M.trace, "prompt")
  if require("bonsai.config").get().approval.prompt == "select" then
    vim.ui.select({ M.APPROVE, M.REJECT }, {
      prompt = M.question(entry.params),
      kind = "bonsai.approval",
    }, answer)
  else
    float_prompt(entry, answer)
  end
end

--- Wait, inside the handler's coroutine, for `start(resume)` to call resume.
---@param start fun(resume: fun(value: any))
---@return any
local function await(start)
  local co = coroutine.running()
  local done, value = false, nil
  start(function(v)
    if done then
      return
    end
    done, value = true, v
    if co and coroutine.status(co) == "suspended" then
      coroutine.resume(co)
    end
  end)
  if not done then
    assert(co, "bonsai: the approval prompt needs a coroutine")
    coroutine.yield()
  end
  return value
end

local function redraw_status()
  pcall(vim.cmd, "redrawstatus!")
end

--- Handle the server request; returns the result sent back to the daemon.
---@param params bonsai.ApprovalRequestParams
---@return bonsai.ApprovalRequestResult
function M.handle(params)
  counter = counter + 1
  local id = params.approvalId or ("local:" .. counter)
  ---@type bonsai.PendingApproval
  local entry = { params = params, settled = false }
  M.pending[id] = entry
  redraw_status()
  vim.notify(("bonsai: %s waits for your approval"):format(M.subject(params)), vim.log.levels.WARN)
  entry.preview = show_review(params)
  -- Draw the review before asking: the prompt comes from the next loop turn.
  pcall(vim.cmd, "redraw")
  table.insert(M.trace, "redraw")
  await(function(resume)
    vim.schedule(resume)
  end)
  local choice
  if not entry.settled then
    choice = await(function(resume)
      entry.resume = resume
      ask(entry, function(item)
        if entry.settled then
          local by = entry.by or "another window"
          vim.notify(
            ("bonsai: %s was already answered in %s; your answer was not used"):format(
              entry.params.tool,
              by
            ),
            vim.log.levels.INFO
          )
          return
        end
        resume(item)
      end)
    end)
  end
  entry.settled = true
  close_windows(entry)
  M.pending[id] = nil
  redraw_status()
  return { approved = choice == M.APPROVE }
end

local OUTCOME_WORDS = {
  approved = "approved",
  rejected = "rejected",
  cancelled = "withdrawn: the turn was cancelled",
  expired = "withdrawn: nobody answered in time",
  unanswered = "withdrawn: nobody could answer",
}

--- The note for the chat: what happened, and where when it was not here.
---@param params bonsai.ApprovalResolvedParams
---@return string
function M.outcome_note(params)
  local words = OUTCOME_WORDS[params.outcome] or params.outcome
  if params.outcome == "approved" or params.outcome == "rejected" then
    local where = params.yours and "" or (" in " .. (params.by ~= "" and params.by or "another window"))
    return ("%s %s%s"):format(words, params.tool, where)
  end
  return ("%s %s"):format(params.tool, words)
end

--- `bonsai/approval/resolved`: note the outcome; close a prompt still open here.
---@param params bonsai.ApprovalResolvedParams
function M.resolved(params)
  require("bonsai.chat").note(params.sessionId, M.outcome_note(params))
  local entry = M.pending[params.approvalId]
  if not entry or entry.settled then
    return
  end
  entry.settled = true
  entry.by = params.by ~= "" and params.by or nil
  close_windows(entry)
  table.insert(M.trace, "closed")
  if not params.yours then
    vim.notify("bonsai: " .. M.outcome_note(params), vim.log.levels.INFO)
  end
  if entry.resume then
    entry.resume(nil)
  end
end

return M
