"""A warm check, whose saved results are still current, derives nothing and checks nothing: it must not load
the modules that do (they were most of its start-up). Which modules a run imports is a fact, not a timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples/demo"

# Run the CLI in-process and print which of the package's modules the run imported, with its JSON output.
_PROBE = """
import contextlib, io, json, sys
from spec_contract.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(["check", sys.argv[1], "--format", "json"])
    except SystemExit:
        pass
print(json.dumps({"modules": sorted(m for m in sys.modules if m.startswith("spec_contract")),
                  "findings": json.loads(out.getvalue())["findings"]}))
"""

NOT_ON_A_WARM_RUN = (
    "spec_contract.engine.contract",  # the contract's derivation
    "spec_contract.engine.check.crashes",  # the checks
    "spec_contract.engine.check.status",
    "spec_contract.engine.check.wrappers",
    "spec_contract.engine.summarise.scan",  # the parser
    "spec_contract.engine.summarise.flow",
)


def _probe(cache: Path) -> dict:
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([str(REPO / "server"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _PROBE, str(DEMO)], env=env, capture_output=True, text=True,
                          timeout=600, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_a_warm_check_loads_neither_the_checks_nor_the_parser_and_reports_what_the_cold_one_did(tmp_path):
    cold, warm = _probe(tmp_path), _probe(tmp_path)
    assert set(NOT_ON_A_WARM_RUN) <= set(cold["modules"])  # the names are real: the cold run needs them all
    assert not set(NOT_ON_A_WARM_RUN) & set(warm["modules"])
    assert warm["findings"] == cold["findings"] and cold["findings"]
