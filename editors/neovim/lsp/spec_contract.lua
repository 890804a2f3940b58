-- spec-contract language server for Neovim 0.11 and later.
--
-- Neovim 0.11 reads `lsp/<name>.lua` files from 'runtimepath'. Copy this file to
-- ~/.config/nvim/lsp/spec_contract.lua (or add editors/neovim to 'runtimepath'), then enable it:
--
--   vim.lsp.enable('spec_contract')
--
-- Override any field without editing this file, e.g. to run the server from a virtualenv:
--
--   vim.lsp.config('spec_contract', { cmd = { '/path/to/venv/bin/python', '-m', 'spec_contract', 'serve' } })

---@type vim.lsp.Config
return {
  -- The server runs from the interpreter that has spec-contract installed (`pip install spec-contract`).
  cmd = { 'python3', '-m', 'spec_contract', 'serve' },
  filetypes = { 'python' },
  -- The contract comes from the workers in the whole project, so the root must be the project, not the file's folder.
  root_markers = { 'pyproject.toml', 'setup.py', '.git' },
  settings = {
    specContract = { enable = true },
  },
}
