"""The spec-contract language server (pygls): a thin front end over :mod:`spec_contract.engine`."""
