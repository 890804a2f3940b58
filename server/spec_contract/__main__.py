"""``python -m spec_contract`` does what the ``spec-contract`` console script does."""

from spec_contract.cli import main

raise SystemExit(main())
