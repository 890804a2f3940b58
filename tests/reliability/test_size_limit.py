"""A file the run needs, over the size limit, is a file it could not read (issue 38, item 5).

A model file over the limit was skipped as "too-large" and ``check`` said "No findings", exit 0; a worker
over it was skipped and its uses left the contract, with no exit 2 (one worker alone: "the contract is
empty ... check 'receivers'"). README promises exit 2 when a needed file could not be read: the run now
names each such file in its one-line note, reports what it could check, and exits 2, cold and warm. The
language server shows the same note as a message and still gives the other files their diagnostics.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from spec_contract.engine.read.files import MAX_FILE_BYTES
from spec_tree import WORKER, check, wrapper, write_tree

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))  # the end-to-end tests' client helpers
from lsp_harness import diagnostics_now, editor_fixture, initialize, open_document, until  # noqa: E402

LIMIT = f"over the {MAX_FILE_BYTES // 2**20} MiB size limit"
# a second worker whose one use no other worker makes: skipped, the contract loses it
DRAFT_WORKER = """\
class DraftWorker:
    def __init__(self, target_worker):
        target_worker.model_runner.model.get_hidden_dim()
"""


def padded(text: str) -> str:
    """``text`` grown past the size limit by a comment, so it still parses and means the same."""
    line = "# " + "x" * 998 + "\n"
    return text + line * (MAX_FILE_BYTES // len(line) + 1)


def settled(root: Path) -> Path:
    """The tree's files as an hour old: a run trusts (and saves) the signature of a file not written just
    before it was read, so the warm run reads only what changed."""
    past = time.time() - 3600
    for path in root.rglob("*.py"):
        os.utime(path, (past, past))
    return root


def last_error(result) -> str:
    return result.stderr.splitlines()[-1]


def test_a_model_file_over_the_limit_fails_the_run_cold_and_warm(tmp_path):
    root = settled(write_tree(tmp_path, {"srt/models/kimi.py": padded(wrapper("Kimi"))}))
    for _ in range(2):  # cold, then warm (the cache must not remember it as read)
        result = check(root)
        assert result.returncode == 2, (result.stdout, result.stderr)
        assert f"srt/models/kimi.py ({LIMIT})" in result.stderr, result.stderr
        assert last_error(result) == ("spec-contract: error: 1 path(s) the check needed could not be read; "
                                      "the check is incomplete")
        assert "Incomplete: 1 path(s) the check needed could not be read." in result.stdout  # not an all-clear


def test_a_model_file_over_the_limit_fails_the_run_and_the_others_are_still_reported(tmp_path):
    root = write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi"), "srt/models/big.py": padded(wrapper("Big"))})
    result = check(root, "--format", "json")
    assert result.returncode == 2, result.stderr
    report = json.loads(result.stdout)
    assert {(f["class"], f["method"]) for f in report["findings"]} >= {("Kimi", "get_embed_and_head")}
    assert any(f"srt/models/big.py ({LIMIT})" in note for note in report["stats"]["notes"]), report["stats"]


def test_a_worker_over_the_limit_fails_the_run_and_the_rest_is_still_checked(tmp_path):
    root = settled(write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi"),
                                         "srt/speculative/draft_worker.py": padded(DRAFT_WORKER)}))
    for _ in range(2):
        result = check(root)
        assert result.returncode == 2, (result.stdout, result.stderr)
        assert f"srt/speculative/draft_worker.py ({LIMIT})" in result.stderr, result.stderr
        assert "SC001 `Kimi` does not forward `get_embed_and_head`" in result.stdout  # the other worker's uses
        assert last_error(result).startswith("spec-contract: error: 1 path(s) the check needed could not be read")


def test_the_only_worker_over_the_limit_is_named_not_blamed_on_the_receivers(tmp_path):
    root = write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi")})
    (root / "srt/speculative/eagle_worker.py").write_text(padded(WORKER))
    result = check(root)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "spec-contract: error: the contract is empty: could not read 1 path(s) that may hold workers or models: "
        f"srt/speculative/eagle_worker.py ({LIMIT}); the check is incomplete (exclude them, or make them readable)"]


neovim = editor_fixture("neovim-0.11")


async def test_the_server_says_which_files_were_over_the_limit_and_checks_the_rest(neovim, tmp_path):
    root = write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi"), "srt/models/big.py": padded(wrapper("Big")),
                                 "srt/speculative/draft_worker.py": padded(DRAFT_WORKER)})
    await initialize(neovim, [root])
    uri = open_document(neovim, root / "srt/models/kimi.py")
    assert {d.data["member"] for d in await diagnostics_now(neovim, uri)} >= {"get_embed_and_head"}
    told = await until(lambda: [m.message for m in neovim.messages if "could not read 2 path(s)" in m.message],
                       "a message naming the files over the limit")
    assert f"srt/models/big.py ({LIMIT})" in told[0] and f"srt/speculative/draft_worker.py ({LIMIT})" in told[0]
    assert not [m for m in neovim.log_messages if "Traceback" in m.message]
