"""Every bad PATH is one line and exit 2 (issue 24, item 6).

``check L``, where ``L`` is a symlink to itself, printed pathlib's 29-line ``RuntimeError: Symlink loop``
traceback and exited 1, which CI reads as findings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from spec_tree import check, wrapper, write_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    base = write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi")})
    (base / "self").symlink_to("self")
    (base / "ping").symlink_to("pong")
    (base / "pong").symlink_to("ping")
    (tmp_path / "models").symlink_to(base / "srt" / "models")  # outside: a link inside is walked as a folder
    return base


@pytest.mark.parametrize(("given", "why"), [
    ("self", "a symlink loop"),
    ("ping", "a symlink loop"),
    ("self/x.py", "a symlink loop"),
    ("srt/models/kimi.py/inner", "Not a directory"),
    ("no/such/dir", "no such file or directory"),
    ("x" * 5000, "File name too long"),
])
def test_a_bad_path_is_one_line_and_exit_2(tree, given, why):
    result = check(tree, given)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.splitlines()) == 1 and why in result.stderr, result.stderr
    assert result.stdout == ""


def test_a_good_path_beside_a_bad_one_is_not_checked_alone(tree):
    """One bad PATH stops the run before any output: a partial all-clear would hide the typo."""
    result = check(tree, "srt/models/kimi.py", "self")
    assert result.returncode == 2 and "a symlink loop" in result.stderr and result.stdout == ""


def test_a_symlinked_folder_still_checks_what_it_names(tree):
    result = check(tree, "../models")
    assert result.returncode == 1 and "`Kimi`" in result.stdout, result.stderr
