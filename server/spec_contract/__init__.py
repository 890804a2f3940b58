"""spec-contract: keep model wrapper classes in step with the speculative-decoding workers that call them.

The package is one analysis core (:mod:`spec_contract.engine`) with thin front ends: the command line
(:mod:`spec_contract.cli`, :mod:`spec_contract.report`) and the language server (:mod:`spec_contract.lsp`).
"""

__version__ = "0.1.0"
