"""What ``check --diff`` prints applies (issue 38, item 11).

``--diff`` cut the file where ``str.splitlines`` breaks (a form feed, ``\\x1c``, a lone ``\\r``), which is not
where ``patch`` does: for a file with a form-feed line, or one whose lines end in ``\\r``, ``patch -p0``
rejected the diff, though ``--fix`` wrote the right file. It is cut where ``diff -u`` cuts now: each file
below is patched with the real ``patch -p0`` into exactly what ``--fix`` writes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from spec_tree import check, wrapper, write_tree

PATCH = shutil.which("patch")


def variants() -> dict[str, bytes]:
    """Model files whose wrapper lacks the forwards, each with a line break only ``patch`` or only Python sees."""
    return {
        "form_feed_line.py": wrapper("FormFeed").replace("\n\n\nclass", "\n\n\x0c\nclass").encode(),
        "form_feed_in_class.py": wrapper("FormFeedInside").replace(
            "        self.language_model", "        # a page\x0cbreak\n        self.language_model").encode(),
        "cr_only.py": wrapper("CarriageReturns").replace("\n", "\r").encode(),
        "crlf.py": wrapper("Crlf").replace("\n", "\r\n").encode(),
        "no_final_newline_cr.py": wrapper("NoFinalCr").rstrip("\n").replace("\n", "\r").encode(),
        "plain.py": wrapper("Plain").encode(),
    }


def diff_of(root) -> subprocess.CompletedProcess[bytes]:
    """``check --diff`` in ``root``, its output as bytes: a ``\\r`` in it is the file's, not a line break."""
    return subprocess.run([sys.executable, "-I", "-m", "spec_contract", "check", "--diff", "--no-cache"], cwd=root,
                          capture_output=True, timeout=120)


@pytest.mark.skipif(PATCH is None and os.environ.get("CI") != "true", reason="GNU patch is not installed")
def test_the_diff_applies_with_patch_and_gives_what_fix_writes(tmp_path):
    assert PATCH is not None, "CI has GNU patch"
    diffed, fixed = write_tree(tmp_path / "diffed"), write_tree(tmp_path / "fixed")
    for root in (diffed, fixed):
        for name, data in variants().items():
            (root / "srt" / "models" / name).write_bytes(data)
    diff = diff_of(diffed)
    assert diff.returncode == 1 and b"Traceback" not in diff.stderr, diff.stderr
    assert check(fixed, "--fix").returncode == 0
    applied = subprocess.run([PATCH, "-p0", "--batch", "--no-backup-if-mismatch"], input=diff.stdout, cwd=diffed,
                             capture_output=True, timeout=60)
    assert applied.returncode == 0, (applied.stdout, applied.stderr, diff.stdout)
    for name, data in variants().items():
        written = (fixed / "srt" / "models" / name).read_bytes()
        assert written != data, name  # the fix added the forwards
        assert (diffed / "srt" / "models" / name).read_bytes() == written, name
    assert not list(diffed.rglob("*.rej")) and not list(diffed.rglob("*.orig"))
