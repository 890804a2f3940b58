-- spec-contract language server for Neovim 0.11 and later.
--
-- Neovim 0.11 reads `lsp/<name>.lua` files from 'runtimepath'. Copy this file to
-- ~/.config/nvim/lsp/spec_contract.lua (or add editors/neovim to 'runtimepath'), then enable it:
--
--   vim.lsp.enable('spec_contract')
--
-- Override any field without editing this file, e.g. to run the server from a virtualenv:
--
--   vim.lsp.config('spec_contract', { cmd = { '/path/to/venv/bin/python', '-I', '-m', 'spec_contract', 'serve' } })
--
-- Keep `-I`: Neovim starts the server in the project folder, and without it Python looks there first for
-- every module it imports, so a `spec_contract.py`, `argparse.py` or `typing.py` in the project would run.

---@type vim.lsp.Config
return {
  -- The server runs from the interpreter that has spec-contract installed (from a clone of the repository:
  -- `python3 -m pip install ./spec-contract`; it is not on PyPI yet).
  -- `-I` (isolated mode) keeps the working directory, the project, off sys.path: no file there can stand in
  -- for a module of the server or of the standard library. It also ignores PYTHON* variables and the user
  -- site-packages, so install spec-contract into that interpreter's environment (a virtualenv), not `--user`.
  cmd = { 'python3', '-I', '-m', 'spec_contract', 'serve' },
  filetypes = { 'python' },
  -- The contract comes from the workers in the whole project, so the root must be the project, not the file's folder.
  root_markers = { 'pyproject.toml', 'setup.py', '.git' },
  settings = {
    specContract = { enable = true },
  },
  -- What this server's diagnostics look like, set in its own diagnostic namespaces (push and pull), so your
  -- vim.diagnostic.config for other servers is untouched. Unless sorted by severity, Neovim's sign and virtual
  -- text show the last diagnostic of a line, not the worst; the server sends the worst first, the order
  -- vim.diagnostic.open_float() lists them in. Neovim 0.11 shows no virtual text by default: shown here unless
  -- you configured virtual text or virtual lines yourself (then yours applies). To change it, give your own
  -- on_init (editors/neovim/README.md).
  on_init = function(client)
    local global = vim.diagnostic.config() or {}
    local opts = { severity_sort = global.severity_sort or true }
    if not (global.virtual_text or global.virtual_lines) then
      opts.virtual_text = true
    end
    for _, pull in ipairs({ false, true }) do
      vim.diagnostic.config(opts, vim.lsp.diagnostic.get_namespace(client.id, pull))
    end
  end,
}
