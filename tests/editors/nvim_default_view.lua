-- Neovim with the README's configuration as pasted and default settings, run by test_neovim.py inside tmux
-- (a real terminal UI, so the test reads the screen a user sees):
--   nvim -i NONE -u nvim_default_view.lua <file>
-- The configuration comes from SC_NVIM_SETUP (the README's snippet, only `python3` swapped for SC_PYTHON), or,
-- with SC_NVIM_ENABLE set, the shipped lsp/spec_contract.lua through vim.lsp.enable (0.11). Once SC_COUNT
-- diagnostics of the server are on the buffer, it writes them, in the order Neovim holds them, to SC_REPORT and
-- stays open: the test then reads the screen and ends the tmux session.

vim.g.loaded_python3_provider = 0
local env = vim.env

if env.SC_NVIM_ENABLE then
  vim.opt.runtimepath:prepend(env.SC_EDITORS_DIR .. '/neovim')
  local shipped = dofile(env.SC_EDITORS_DIR .. '/neovim/lsp/spec_contract.lua')
  local cmd = vim.deepcopy(shipped.cmd)
  cmd[1] = env.SC_PYTHON
  vim.lsp.config('spec_contract', { cmd = cmd })
  vim.lsp.enable('spec_contract')
else
  dofile(env.SC_NVIM_SETUP)
end

local wanted = tonumber(env.SC_COUNT)
local timer = vim.loop.new_timer()
timer:start(50, 50, vim.schedule_wrap(function()
  local ours = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.source == 'spec-contract' then
      table.insert(ours, { code = d.code, severity = d.severity, message = d.message, lnum = d.lnum })
    end
  end
  if #ours >= wanted then
    timer:stop()
    -- Written whole, then renamed: the test polls for the file and must never read half of it.
    local f = assert(io.open(env.SC_REPORT .. '.part', 'w'))
    f:write(vim.fn.json_encode({ diagnostics = ours }))
    f:close()
    assert(os.rename(env.SC_REPORT .. '.part', env.SC_REPORT))
  end
end))
