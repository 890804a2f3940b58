"""``python -m spec_contract`` does what the ``spec-contract`` console script does."""

from spec_contract.cli import main

if __name__ == "__main__":  # not when a worker process re-imports the main module (engine/parallel.py)
    raise SystemExit(main())
