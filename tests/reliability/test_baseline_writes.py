"""``--write-baseline PATH`` writes a baseline and nothing else (issue 24, items 2 and 8).

It used to replace whatever was at PATH: ``--write-baseline minisgl/models/llava.py`` turned the model file into
JSON and exited 0, and a FIFO or a device node became a regular file. A run narrowed by PATH or ``--select``
dropped the entries it had not checked, and two writers shared one temporary name. Each case here runs the
command as CI does on a small tree of its own.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from pathlib import Path

import pytest
from spec_contract.engine import ConfigError, load_baseline, write_baseline
from spec_tree import check, wrapper, write_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi"),
                                 "srt/models/llava.py": wrapper("Llava", "get_embed_and_head")})


def entries(path: Path) -> list[tuple[str, str, str]]:
    """(class name, member, code) of each entry of the baseline at ``path``."""
    return sorted((e["class"].rpartition(".")[2], e["member"], e["code"])
                  for e in json.loads(path.read_text())["findings"])


def assert_refused(result, *words: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert all(word in result.stderr for word in words), result.stderr


@pytest.mark.parametrize("named", ["srt/models/llava.py", "pyproject.toml"])
def test_a_file_that_is_not_a_baseline_is_never_replaced(tree, named):
    (tree / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1.0"\n')
    before = (tree / named).read_bytes()
    assert_refused(check(tree, "--write-baseline", named), named, "not a spec-contract baseline", "refusing")
    assert (tree / named).read_bytes() == before


def test_a_fifo_or_a_directory_is_refused_and_left_as_it_was(tree):
    os.mkfifo(tree / "pipe")
    (tree / "folder").mkdir()
    for named in ("pipe", "folder"):
        assert_refused(check(tree, "--write-baseline", named, timeout=60), named, "not a regular file")
    assert (tree / "pipe").is_fifo() and (tree / "folder").is_dir()


def test_a_socket_or_a_device_node_is_refused(tree, tmp_path):
    """Nodes of the test's own only: a write that replaced the system's /dev/null would break the machine."""
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind(str(tree / "sock"))
        assert_refused(check(tree, "--write-baseline", "sock", timeout=60), "not a regular file")
    assert (tree / "sock").is_socket()
    try:
        os.mknod(tmp_path / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        return  # not root: no device node of our own to try
    assert_refused(check(tree, "--write-baseline", str(tmp_path / "null")), "not a regular file")
    assert (tmp_path / "null").is_char_device()


def test_a_symlinked_baseline_is_written_through_the_link(tree, tmp_path):
    real = tmp_path / "shared" / "baseline.json"
    real.parent.mkdir()
    (tree / "baseline.json").symlink_to(real)
    assert check(tree, "--write-baseline", "baseline.json").returncode == 0
    assert (tree / "baseline.json").is_symlink() and len(entries(real)) == 5


def test_a_run_narrowed_by_path_keeps_the_entries_of_the_other_files(tree):
    assert check(tree, "--write-baseline", "b.json").returncode == 0
    everything = entries(tree / "b.json")
    assert {c for c, _, _ in everything} == {"Kimi", "Llava"}
    (tree / "srt/models/kimi.py").write_text(wrapper("Kimi", "get_embed_and_head"))  # one Kimi finding fixed
    written = check(tree, "srt/models/kimi.py", "--write-baseline", "b.json")
    assert written.returncode == 0, written.stderr
    assert entries(tree / "b.json") == [e for e in everything if e != ("Kimi", "get_embed_and_head", "SC001")]
    assert "kept 2 entries" in written.stdout


def test_a_run_narrowed_by_select_keeps_the_entries_of_the_other_codes(tree):
    assert check(tree, "--write-baseline", "b.json").returncode == 0
    everything = entries(tree / "b.json")
    assert {code for _, _, code in everything} >= {"SC001", "SC002"}
    assert check(tree, "--select", "SC001", "--write-baseline", "b.json").returncode == 0
    assert entries(tree / "b.json") == everything
    (tree / "srt/models/kimi.py").write_text(wrapper("Kimi", "get_embed_and_head"))
    assert check(tree, "--select", "SC001", "--write-baseline", "b.json").returncode == 0
    assert entries(tree / "b.json") == [e for e in everything if e != ("Kimi", "get_embed_and_head", "SC001")]


def test_concurrent_writers_leave_a_valid_baseline_and_no_temporary_file(tmp_path):
    path = tmp_path / "baseline.json"
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def writer() -> None:
        start.wait()
        try:
            for _ in range(40):
                write_baseline(path, [], str)
        except (ConfigError, OSError) as exc:
            failures.append(exc)

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert load_baseline(path).entries == ()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.json"]


def test_a_baseline_saved_with_a_byte_order_mark_is_read(tree):
    assert check(tree, "--write-baseline", "b.json").returncode == 0
    (tree / "b.json").write_bytes(b"\xef\xbb\xbf" + (tree / "b.json").read_bytes())
    result = check(tree, "--baseline", "b.json")
    assert result.returncode == 0, result.stderr


def test_version_true_is_not_version_1(tree):
    (tree / "b.json").write_text('{"version": true, "findings": []}')
    assert_refused(check(tree, "--baseline", "b.json"), "version True is not supported")


def test_a_run_over_a_worker_writes_each_entry_once(tree):
    """A worker's PATH reports every class that fails its uses (see test_precommit_contract): those entries
    are checked by the run, so they are written once, not also kept."""
    assert check(tree, "--write-baseline", "b.json").returncode == 0
    everything = entries(tree / "b.json")
    assert check(tree, "srt/speculative/eagle_worker.py", "--write-baseline", "b.json").returncode == 0
    assert entries(tree / "b.json") == everything
