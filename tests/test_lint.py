"""The tree passes ruff with the rule set chosen in pyproject.toml ([tool.ruff]): pyflakes, pycodestyle
(line length left to the author), import order, bugbear and pyupgrade; and the package passes mypy at the
strictness set there ([tool.mypy]). Run as tests so the README's one test command (and so `.ci/run`) keeps
both clean."""

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    result = subprocess.run([ruff, "check", "--no-cache", "--output-format", "concise", str(REPO)],
                            capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], capture_output=True, text=True,
                            cwd=REPO, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
