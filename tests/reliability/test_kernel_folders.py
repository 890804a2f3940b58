"""No walk enters the kernel's folders, ``/proc``, ``/sys`` and ``/dev`` (issue 38, item 13).

With a workspace folder ``/``, the walk followed ``/proc/<pid>/cwd`` into other processes' folders and stopped at
an unrelated broken ``pyproject.toml`` there, and the open file got no diagnostics. The walk of ``/`` itself is
asked for its first folder only (walking the whole machine is no test); a link into ``/proc`` stands for the
rest: it leads to another process's working folder holding exactly such a ``pyproject.toml``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from spec_contract.engine.read.discovery import is_project
from spec_contract.engine.read.files import discover
from spec_contract.engine.read.listing import Listings, walk

pytestmark = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc on this system")


@pytest.mark.parametrize("listings", [None, Listings()], ids=["own walk", "run's listings"])
def test_the_walk_of_the_root_leaves_the_kernel_folders_out(listings):
    top, folders, _ = next(walk("/", listings))
    assert top == "/"
    assert {"proc", "sys", "dev"}.isdisjoint(folders), folders
    assert "tmp" in folders or "usr" in folders  # the rest of the root is still walked


@pytest.fixture
def other_process(tmp_path: Path):
    """A process whose working folder holds a broken ``[tool.spec-contract]`` table, as any other user's might."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text("[tool.spec-contract]\nenable = maybe\n")
    (elsewhere / "theirs.py").write_text("class Theirs:\n    pass\n")
    process = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], cwd=elsewhere,
                               stdin=subprocess.PIPE)
    try:
        yield process.pid
    finally:
        process.communicate(timeout=60)


def test_a_link_into_proc_is_not_followed(tmp_path, other_process):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "mine.py").write_text("class Mine:\n    pass\n")
    (tree / "pkg" / "proc-of-another").symlink_to(f"/proc/{other_process}")
    (tree / "pkg" / "dev").symlink_to("/dev")
    found = discover(tree, own_project=is_project, nested=(nested := []))
    assert [f.rel for f in found] == ["pkg/mine.py"]
    assert nested == []
