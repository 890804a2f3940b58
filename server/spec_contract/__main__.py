"""``python -m spec_contract`` does what the ``spec-contract`` console script does."""

from spec_contract.cli import entry

if __name__ == "__main__":  # not when imported: a spawned worker of ``python path/to/__main__.py`` re-imports it
    entry()
