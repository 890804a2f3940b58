-- Headless Neovim session against the spec-contract server, run by test_neovim.py as
--   nvim --headless -i NONE -u nvim_e2e.lua
-- It does what a user does (wait for diagnostics, hover the class, apply the quick fix, save) and
-- writes what it saw to a JSON report; the assertions live in pytest.
--
-- Environment:
--   SC_PYTHON       the interpreter that replaces `python3` in the shipped command line (the one running pytest)
--   SC_ROOT         the workspace root
--   SC_FILE         the file to open
--   SC_REPORT       where to write the JSON report
--   SC_EDITORS_DIR  the repository's editors/ folder (0.11 uses editors/neovim/lsp/spec_contract.lua)
--   SC_TITLE        the title of the quick fix to apply
--   SC_METHOD       the method that quick fix forwards
--   SC_TIMEOUT_MS   how long to wait for each server answer
--   SC_NVIM_SETUP   optional: a Lua file that starts the client itself (the README's snippet for 0.8-0.10);
--                   without it 0.11 uses the shipped lsp/spec_contract.lua and older releases start_client
--                   with its command line (as the README tells 0.7 users to)

vim.g.loaded_python3_provider = 0

local env = vim.env
-- The shipped command line, only the interpreter swapped: what a user gets, flags included.
local shipped = dofile(env.SC_EDITORS_DIR .. '/neovim/lsp/spec_contract.lua')
local server_cmd = vim.deepcopy(shipped.cmd)
assert(server_cmd[1] == 'python3', 'the shipped command starts with python3')
server_cmd[1] = env.SC_PYTHON
local timeout = tonumber(env.SC_TIMEOUT_MS or '120000')
local started = vim.loop.hrtime()
local mode = (env.SC_NVIM_SETUP and 'snippet') or (vim.lsp.config and 'vim.lsp.enable') or 'vim.lsp.start_client'
local report = { version = vim.version(), mode = mode }

-- A server that dies ends the waits at once instead of after the timeout.
local function on_exit(code, signal)
  report.server_exit = { code = code, signal = signal }
end

local function elapsed_ms()
  return math.floor((vim.loop.hrtime() - started) / 1e6)
end

local function finish(err)
  report.error = err
  report.elapsed_ms = elapsed_ms()
  local f = assert(io.open(env.SC_REPORT, 'w'))
  f:write(vim.fn.json_encode(report))
  f:close()
  vim.cmd(err and 'cquit!' or 'qa!')
end

if mode == 'vim.lsp.enable' then
  -- Exercise the shipped config: only the interpreter differs from what a user gets.
  vim.opt.runtimepath:prepend(env.SC_EDITORS_DIR .. '/neovim')
  vim.lsp.config('spec_contract', { cmd = server_cmd, on_exit = on_exit })
  vim.lsp.enable('spec_contract')
elseif mode == 'snippet' then
  dofile(env.SC_NVIM_SETUP)
end

-- What the server tells the user (a rejected setting comes as a warning), recorded for the assertions.
report.messages = {}
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, result, ctx, config)
  table.insert(report.messages, { type = result.type, message = result.message })
  return show_message(err, result, ctx, config)
end

-- Wait for a condition; false when it timed out or the server exited.
local function wait_for(condition)
  local met = vim.wait(timeout, function() return report.server_exit ~= nil or condition() end, 20)
  return met and report.server_exit == nil
end

local function clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr, name = 'spec_contract' })
  end
  local found = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if c.name == 'spec_contract' then
      table.insert(found, c)
    end
  end
  return found
end

-- Diagnostics of our source, as LSP sees them (the range in the negotiated encoding).
local function our_diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == 'spec-contract' then
      table.insert(out, d)
    end
  end
  return out
end

local function summarise(diags)
  local out = {}
  for _, d in ipairs(diags) do
    table.insert(out, { code = d.code, source = d.source, message = d.message, lnum = d.lnum, col = d.col,
      end_col = d.end_col, severity = d.severity })
  end
  return out
end

local function mentions(diags, method)
  for _, d in ipairs(diags) do
    if d.message:find(method, 1, true) then
      return true
    end
  end
  return false
end

-- The answer of the first client that gave one, or nil and the errors.
local function request(bufnr, method, params)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, timeout)
  if not responses then
    return nil, tostring(err)
  end
  local errors = {}
  for _, r in pairs(responses) do
    if r.error then
      table.insert(errors, vim.inspect(r.error))
    elseif r.result ~= nil then
      return r.result
    end
  end
  return nil, table.concat(errors, '; ')
end

-- The diagnostic as the server sent it: 0.11 keeps it whole in user_data.lsp; 0.7 keeps only some
-- fields there, so the range is rebuilt from Neovim's byte columns in the negotiated encoding.
local function to_lsp(bufnr, d, enc)
  local lsp_diag = d.user_data.lsp
  if lsp_diag.range then
    return lsp_diag
  end
  local function position(row, col)
    return { line = row, character = vim.lsp.util.character_offset(bufnr, row, col, enc) }
  end
  return vim.tbl_extend('keep', {
    range = { start = position(d.lnum, d.col), ['end'] = position(d.end_lnum, d.end_col) },
    severity = d.severity,
    message = d.message,
    source = d.source,
    code = d.code,
  }, lsp_diag)
end

local function hover_text(result)
  local contents = result.contents
  if type(contents) == 'string' then
    return contents
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    table.insert(parts, type(c) == 'string' and c or c.value)
  end
  return table.concat(parts, '\n')
end

local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(env.SC_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  if mode == 'vim.lsp.start_client' then
    local id = vim.lsp.start_client({ name = 'spec_contract', cmd = server_cmd, root_dir = env.SC_ROOT, on_exit = on_exit })
    vim.lsp.buf_attach_client(bufnr, id)
  end

  if not wait_for(function() return #clients(bufnr) > 0 and clients(bufnr)[1].initialized end) then
    return finish('no spec_contract client attached to ' .. vim.api.nvim_buf_get_name(bufnr))
  end
  local client = clients(bufnr)[1]
  local enc = client.offset_encoding
  report.offset_encoding = enc
  report.root_dir = client.config.root_dir

  wait_for(function() return #our_diagnostics(bufnr) >= 2 end)
  local diags = our_diagnostics(bufnr)
  report.diagnostics = summarise(diags)
  report.diagnostics_ms = elapsed_ms()
  local target
  for _, d in ipairs(diags) do
    if d.message:find(env.SC_METHOD, 1, true) then
      target = d
    end
  end
  if not target then
    return finish('no diagnostic mentions ' .. env.SC_METHOD)
  end

  -- Hover with the cursor inside the class name, as a user would.
  vim.api.nvim_win_set_cursor(0, { target.lnum + 1, target.col + 1 })
  local hover, herr = request(bufnr, 'textDocument/hover', vim.lsp.util.make_position_params(0, enc))
  report.hover = hover and hover_text(hover) or nil
  report.hover_error = herr

  local lsp_diag = to_lsp(bufnr, target, enc)
  local actions, aerr = request(bufnr, 'textDocument/codeAction', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = lsp_diag.range,
    context = { diagnostics = { lsp_diag }, only = { 'quickfix' } },
  })
  if not actions then
    return finish('no code actions: ' .. tostring(aerr))
  end
  report.action_titles = {}
  local chosen
  for _, a in ipairs(actions) do
    table.insert(report.action_titles, a.title)
    if a.title == env.SC_TITLE then
      chosen = a
    end
  end
  if not chosen then
    return finish('no code action titled ' .. env.SC_TITLE)
  end
  if not chosen.edit and not chosen.command then
    local resolved, rerr = request(bufnr, 'codeAction/resolve', chosen)
    if not resolved then
      return finish('codeAction/resolve failed: ' .. tostring(rerr))
    end
    chosen = resolved
  end
  report.action_kind = chosen.kind
  if chosen.edit then
    vim.lsp.util.apply_workspace_edit(chosen.edit, enc)
  end
  if chosen.command then
    local command = type(chosen.command) == 'table' and chosen.command or chosen
    local _, cerr = request(bufnr, 'workspace/executeCommand', { command = command.command, arguments = command.arguments })
    if cerr and cerr ~= '' then
      return finish('executeCommand failed: ' .. cerr)
    end
  end
  vim.cmd('write')
  report.saved_ms = elapsed_ms()

  -- The server re-checks the edited buffer: the fixed member's diagnostic goes, the other one stays.
  wait_for(function() return not mentions(our_diagnostics(bufnr), env.SC_METHOD) end)
  report.diagnostics_after = summarise(our_diagnostics(bufnr))
  finish(nil)
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    vim.schedule(function()
      local ok, err = pcall(run)
      if not ok then
        finish('driver error: ' .. tostring(err))
      end
    end)
  end,
})
