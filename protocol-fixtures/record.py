"""Re-record the protocol fixtures: real end-to-end test sessions, both directions, as JSONL.

Usage (from the repository root): ``python protocol-fixtures/record.py``. Each scenario is one pytest-lsp
test whose server runs behind ``tests/lsp/recording_proxy.py`` (selected by ``SPEC_CONTRACT_RECORD``), which
writes ``protocol-fixtures/<name>.jsonl`` in lsp-devtools' record format. (``lsp-devtools agent`` +
``record`` captured the same lines, but its agent never exited after a session, hanging pytest-lsp.)
Only scenarios that change files through the protocol (never on disk behind the server's back) are recorded, so ``tests/test_replay.py`` can replay them on a fresh copy of
``examples/demo``. Re-record when the demo workspace or the server's intended behaviour changes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SCENARIOS = {
    "push-neovim-diagnostics": "tests/lsp/test_diagnostics_e2e.py::test_wrapper_gets_two_sc001_on_its_class_name[neovim-0.11]",
    "pull-vscode-diagnostics": "tests/lsp/test_diagnostics_e2e.py::test_wrapper_gets_two_sc001_on_its_class_name[vscode-1.139.1]",
    "pull-vscode-inner-model-edit": "tests/lsp/test_diagnostics_e2e.py::test_removing_the_inner_method_clears_the_wrappers_diagnostic[vscode-1.139.1]",
    "push-neovim-inner-model-edit": "tests/lsp/test_diagnostics_e2e.py::test_removing_the_inner_method_clears_the_wrappers_diagnostic[neovim-0.11]",
    "push-emacs-broken-then-repaired": "tests/lsp/test_diagnostics_e2e.py::test_broken_file_keeps_its_findings_until_repaired[emacs-29.1]",
    "vscode-hover": "tests/lsp/test_features_e2e.py::test_hover_on_wrapper_definition_and_call_site[vscode-1.139.1]",
    "neovim-implementation": "tests/lsp/test_features_e2e.py::test_implementation_from_a_call_site[neovim-0.11]",
    "neovim-code-actions-resolve": "tests/lsp/test_features_e2e.py::test_code_actions_offer_each_kind_and_honour_only[neovim-0.11]",
    "emacs-code-actions-eager": "tests/lsp/test_features_e2e.py::test_code_actions_offer_each_kind_and_honour_only[emacs-29.1]",
    "vscode-apply-fixes": "tests/lsp/test_features_e2e.py::test_applying_fixes[vscode-1.139.1]",
}


def record(name: str, node: str) -> None:
    target = HERE / f"{name}.jsonl"
    env = {**os.environ, "SPEC_CONTRACT_RECORD": str(target)}
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", node], cwd=REPO, env=env)
    if tests.returncode != 0:
        raise SystemExit(f"{node} failed while recording")
    print(f"{target.relative_to(REPO)}: {sum(1 for _ in target.open())} messages")


def main() -> None:
    for name, node in SCENARIOS.items():
        record(name, node)


if __name__ == "__main__":
    main()
