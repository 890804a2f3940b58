"""The small ones of issue 24 (item 8): a cache entry replaced by a folder, ``serve --bogus``, and frames whose
length is one byte too long with a body that is not UTF-8, or whose body is not JSON.

(The BOM baseline and ``"version": true`` are in test_baseline_writes.)
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from framing import RawServer, frame, header
from spec_contract.engine import Project, load_config
from spec_tree import wrapper, write_tree


def test_a_cache_entry_replaced_by_a_folder_is_written_again(tmp_path):
    root = write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi")})
    cache = tmp_path / "cache"
    cold = Project(root, load_config(root), cache_dir=cache).analyze()
    entries = sorted(p for p in cache.rglob("*.pickle") if p.parent.name != "results")
    assert entries
    for entry in entries:
        entry.unlink()
        entry.mkdir()
        (entry / "stray").write_text("")
    for results in cache.rglob("results/*.pickle"):
        results.unlink()
    again = Project(root, load_config(root), cache_dir=cache).analyze()
    assert [f.member for f in again.findings] == [f.member for f in cold.findings]
    assert all(entry.is_file() for entry in entries), [e for e in entries if not e.is_file()]
    assert list(cache.rglob("results/*.pickle"))  # the cache went on being written after the folders


@pytest.mark.parametrize("argv", [["serve", "--bogus"], ["serve", "--port", "x"], ["check", "--bogus"]])
def test_a_usage_error_is_one_line(argv):
    result = subprocess.run([sys.executable, "-I", "-m", "spec_contract", *argv], capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("spec-contract: error: "), result.stderr


BAD_BODIES = {
    "one byte too long, not UTF-8": (lambda body: header(len(body) + 1) + body, b'"\xff\xfe"'),
    "one byte too long, not JSON": (lambda body: header(len(body) + 1) + body, b"hello"),
    "five bytes too long, not UTF-8": (lambda body: header(len(body) + 5) + body, b"\xff\xff\xff"),
    "right length, not JSON": (lambda body: header(len(body)) + body, b"not json at all"),
    "right length, not UTF-8": (lambda body: header(len(body)) + body, b"\xc3\x28"),
    "right length, a value then junk": (lambda body: header(len(body)) + body, b'{"a": 1} xyz'),
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
def test_a_bad_body_gets_parse_error_and_the_next_request_is_answered(case):
    make, body = BAD_BODIES[case]
    with RawServer() as server:
        server.initialize(None)
        server.send(make(body))
        answer = server.call("shutdown")
        assert "result" in answer, answer
        errors = [m["error"]["code"] for m in server.received if "error" in m and m.get("id") is None]
        assert errors == [-32700], server.received
        server.notify("exit")
        assert server.exit_code() == 0


def test_a_frame_after_a_bad_one_is_read_whole():
    """The next message's header, partly read by the too-long length, is given back, not skipped."""
    with RawServer() as server:
        server.initialize(None)
        server.send(header(4) + b"\xff\xff\xff" + frame({"id": 7, "method": "shutdown"}))
        answer = server.response(7)
        assert "result" in answer
        skipped = [m for m in server.received if m.get("method") == "window/logMessage"
                   and "skipped" in m["params"]["message"]]
        assert skipped == [], skipped
