"""What ``check --diff`` prints applies, and what ``check --fix`` says it did is what it did (issue 38, items 11
and 14).

``--diff`` cut the file where ``str.splitlines`` breaks (a form feed, ``\\x1c``, a lone ``\\r``), which is not
where ``patch`` does: for a file with a form-feed line, or one whose lines end in ``\\r``, ``patch -p0``
rejected the diff, though ``--fix`` wrote the right file. It is cut where ``diff -u`` cuts now: each file
below is patched with the real ``patch -p0`` into exactly what ``--fix`` writes.

The ``--fix`` report of a member implemented like another class's said "forwarding to `self.`"; it says
"implemented like `Model`" now.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from spec_tree import check, wrapper, write_tree

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))  # the engine tests' trees
from engine_trees import make_tree  # noqa: E402
from test_engine_implement import GEMMA, QWEN, WORKER  # noqa: E402

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


# --- item 14: the report of an implementation ---------------------------------------------------------------

def test_the_fix_report_says_a_member_is_implemented_like_its_model_not_forwarded(tmp_path):
    """The implement-by-analogy shape of tests/engine/test_engine_implement.py: ``GemmaForCausalLM`` lacks
    ``get_embed_and_head``, which ``QwenForCausalLM``, holding the same parts, implements."""
    root = make_tree(tmp_path, {"pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": "",
                                "pkg/speculative/eagle_worker.py": WORKER, "pkg/models/qwen.py": QWEN,
                                "pkg/models/gemma.py": GEMMA}) / "pkg"
    result = check(root, "--fix")
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "models/gemma.py:6:7: added 1 member to `GemmaForCausalLM`" in result.stdout, result.stdout
    assert "  + `get_embed_and_head` implemented like `QwenForCausalLM`: error SC010" in result.stdout, result.stdout
    assert "forwarding to `self.`" not in result.stdout
    assert "return self.model.embed_tokens.weight, self.lm_head.weight" in (root / "models/gemma.py").read_text()
