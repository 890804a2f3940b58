"""``python -m spec_contract.lsp`` starts the language server (what ``spec-contract serve`` does)."""

import sys

from spec_contract.lsp.server import main

raise SystemExit(main(sys.argv[1:]))
