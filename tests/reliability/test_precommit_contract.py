"""A commit that changes the contract fails on the wrapper it breaks, though the wrapper is not staged (issue 24,
item 3).

pre-commit passes the hook the staged files only, and the hook used to report only the classes those files
define: staging a worker that starts using a new member on the target, and the inner model that implements it,
passed, while ``check .`` failed on the wrapper that does not forward it. Here the hook's own command line (read
from ``.pre-commit-hooks.yaml``) runs on exactly those staged files.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from spec_tree import LLAMA, MEMBERS, WORKER, check, wrapper, write_tree

REPO = Path(__file__).resolve().parents[2]


def hook_entry(hook_id: str) -> list[str]:
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    (entry,) = re.findall(rf"^- id: {re.escape(hook_id)}\n(?:  .*\n)*?  entry: (.*)$", hooks, re.MULTILINE)
    return shlex.split(entry)


def run_hook(root: Path, files: list[str]) -> subprocess.CompletedProcess[str]:
    """The hook as pre-commit runs it in the checkout ``root``: its entry, then the staged files."""
    command = hook_entry("spec-contract")
    assert command[:2] == ["spec-contract", "check"], command
    return check(root, *command[2:], *files)


def test_a_staged_worker_change_fails_on_the_unstaged_wrapper_it_breaks(tmp_path):
    base = write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi", *MEMBERS)})
    assert check(tmp_path, ".").returncode == 0  # the committed state: Kimi forwards everything

    worker = base / "srt/speculative/eagle_worker.py"
    worker.write_text(WORKER + "        target_worker.model_runner.model.get_hidden_dim()\n")
    llama = base / "srt/models/llama.py"
    llama.write_text(LLAMA.replace("\n\nEntryClass", "\n    def get_hidden_dim(self):\n        return 1\n\n\n"
                                   "EntryClass"))
    staged = [str(worker.relative_to(tmp_path)), str(llama.relative_to(tmp_path))]

    whole = check(tmp_path, ".")
    assert whole.returncode == 1 and "`Kimi` does not forward `get_hidden_dim`" in whole.stdout, whole.stdout

    hooked = run_hook(tmp_path, staged)
    assert hooked.returncode == 1, (hooked.stdout, hooked.stderr)
    assert "`Kimi` does not forward `get_hidden_dim`" in hooked.stdout
    assert f"fail the uses in {staged[0]}" in hooked.stderr  # why Kimi is reported, named as the hook named it


def test_a_staged_wrapper_alone_still_reports_only_its_own_classes(tmp_path):
    base = write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi"), "srt/models/llava.py": wrapper("Llava")})
    hooked = run_hook(tmp_path, [str((base / "srt/models/kimi.py").relative_to(tmp_path))])
    assert hooked.returncode == 1
    assert "`Kimi`" in hooked.stdout and "`Llava`" not in hooked.stdout
