"""Nothing the tool reads can hang it or exhaust memory (issue 24, item 5).

A baseline that is a FIFO (named by ``[tool.spec-contract] baseline``, which a cloned repository can ship) hung
``check`` for ever and, in the editor, the engine thread; ``/dev/zero`` or a huge file as the baseline read
until ``MemoryError``; a glob with a run of ``*`` backtracked exponentially. Each run here has a generous
timeout only so that a regression fails instead of hanging the suite: nothing is timed.
"""

from __future__ import annotations

import fnmatch
import json
import os
import random
import re
from pathlib import Path

import pytest
from framing import RawServer
from spec_contract.engine.read.globs import glob_match, normalised_glob
from spec_tree import check, wrapper, write_tree

LIMIT = 60  # seconds: a hang fails the test, a slow machine does not


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi")})


def assert_one_line_error(result, *words: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert all(word in result.stderr for word in words), result.stderr


def test_a_fifo_baseline_from_the_pyproject_is_refused_not_waited_on(tree):
    os.mkfifo(tree / "baseline.json")
    (tree / "pyproject.toml").write_text('[tool.spec-contract]\nbaseline = "baseline.json"\n')
    assert_one_line_error(check(tree, timeout=LIMIT), "baseline", "not a regular file")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_the_baseline_is_refused(tree, device):
    if not Path(device).exists():
        pytest.skip(f"no {device} here")
    assert_one_line_error(check(tree, "--baseline", device, timeout=LIMIT), "not a regular file")


def test_a_huge_baseline_is_refused_without_reading_it(tree):
    huge = tree / "huge.json"
    with huge.open("wb") as handle:  # sparse: three gigabytes that take no disk
        handle.truncate(3 * 1024**3)
    assert_one_line_error(check(tree, "--baseline", "huge.json", timeout=LIMIT), "larger than 16 MiB")


def test_a_fifo_pyproject_or_config_file_is_refused_not_waited_on(tree):
    os.mkfifo(tree / "pyproject.toml")
    result = check(tree, timeout=LIMIT)  # discovery walks past it: it cannot name a [tool.spec-contract]
    assert result.returncode == 1 and "Kimi" in result.stdout, result.stderr
    assert_one_line_error(check(tree, "--config", "pyproject.toml", timeout=LIMIT), "not a regular file")


@pytest.mark.parametrize("key", ["exclude", "include", "model-files", "workers"])
def test_a_run_of_stars_in_any_glob_key_is_one_wildcard(tree, key):
    (tree / "pyproject.toml").write_text(f'[tool.spec-contract]\n{key} = ["{"*" * 25}x"]\n')
    result = check(tree, "--format", "json", timeout=LIMIT)
    assert result.returncode in (0, 1, 2), result.stderr  # whatever the glob selects, the run ends
    if result.returncode != 2:
        json.loads(result.stdout)


@pytest.mark.parametrize("glob", ["*a" * 12 + "b", "**/a/" * 12 + "b", "*" * 25 + "x", "a*?" * 10 + "z",
                                  "s**" + "a**" * 8 + "b"])
def test_spread_wildcards_in_a_glob_key_cannot_stall_the_run(tree, glob):
    """Not only runs of ``*``: each wildcard used to multiply the tries (``*a`` six times: 0.6 s per path)."""
    (tree / "srt/models" / ("a" * 60 + ".py")).write_text("")
    (tree / "pyproject.toml").write_text(f'[tool.spec-contract]\nextend-exclude = ["{glob}"]\n')
    result = check(tree, timeout=LIMIT)
    assert result.returncode == 1 and "Kimi" in result.stdout, result.stderr


def _reference(path: list[str], glob: list[str]) -> bool:
    """Segment by segment: ``**/`` is any number of segments, a last ``**`` anything after its ``/`` (one
    segment, maybe empty, or more), anything else one segment (``fnmatch``)."""
    if not glob:
        return not path
    if glob == ["**"]:
        return bool(path)
    if glob[0] == "**":
        return any(_reference(path[i:], glob[1:]) for i in range(len(path) + 1))
    return bool(path) and fnmatch.fnmatchcase(path[0], glob[0]) and _reference(path[1:], glob[1:])


def test_the_compiled_globs_match_as_globs_do():
    rng = random.Random(24)
    for _ in range(3000):
        glob = "/".join(rng.choice(["**", "*", "a*", "*b", "a?", "?*?", "a*b*a", "ab"]) for _ in range(rng.randint(1, 4)))
        for _ in range(5):
            path = "/".join("".join(rng.choice("ab") for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(1, 4)))
            assert glob_match(path, (glob,)) is _reference(path.split("/"), glob.split("/")), (glob, path)


def test_a_list_of_globs_matches_what_one_of_them_matches():
    """A list is matched as one alternation behind a search for the literal text one of its globs needs
    (``ab`` of ``**/ab/*b``): that search may only spare paths none of them matches."""
    rng = random.Random(25)
    pieces = ["**", "*", "a*", "*b", "a?", "ab", "ba", "b"]
    for _ in range(2000):
        globs = tuple("/".join(rng.choice(pieces) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3)))
        for _ in range(5):
            path = "/".join("".join(rng.choice("ab") for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(1, 4)))
            expected = any(_reference(path.split("/"), glob.split("/")) for glob in globs)
            assert glob_match(path, globs) is expected, (globs, path)


def _crossing_reference(path: str, glob: str) -> bool:
    """The textbook regex of a glob with ``**`` inside a segment (``x**`` crosses folders): right, and
    exponential on long inputs, so only for short ones."""
    pattern = "".join("(?:.*/)?" if t == "**/" else ".*" if t == "**" else "[^/]*" if t == "*" else
                      "[^/]" if t == "?" else re.escape(t) for t in re.findall(r"\*\*/|\*\*|\*|.", glob))
    return re.match(pattern + r"\Z", path) is not None


def test_globs_with_a_double_star_inside_a_segment_match_as_the_textbook_regex_does():
    rng = random.Random(7)
    for _ in range(3000):
        glob = "".join(rng.choice(["a", "b", "/", "*", "**", "?", "**/", "a**", "**b"]) for _ in range(rng.randint(1, 6)))
        for _ in range(5):
            path = "".join(rng.choice("ab/") for _ in range(rng.randint(0, 8)))
            assert glob_match(path, (glob,)) is _crossing_reference(path, normalised_glob(glob)), (glob, path)


def test_normalised_globs_match_what_they_matched():
    assert normalised_glob("*" * 25) == "**" and normalised_glob("a/**/**/**/*.py") == "a/**/*.py"
    assert normalised_glob("**/**") == "**" and normalised_glob("**/dflash*/**") == "**/dflash*/**"
    for path, glob, matched in [("a/b/c.py", "a/**/**/*.py", True), ("a/c.py", "a/**/**/*.py", True),
                                ("x/c.py", "a/**/**/*.py", False), ("abc/d", "***", True), ("a" * 40, "*" * 30 + "b", False),
                                ("srt/models/x.py", "**/**/models/*.py", True)]:
        assert glob_match(path, (glob,)) is matched, (path, glob)


def test_the_server_answers_with_a_fifo_baseline(tree, tmp_path):
    os.mkfifo(tree / "baseline.json")
    (tree / "pyproject.toml").write_text('[tool.spec-contract]\nbaseline = "baseline.json"\n')
    path = tree / "srt/models/kimi.py"
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "server-cache")}
    with RawServer(cwd=tree, env=env) as server:
        server.initialize(tree)
        server.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "python", "version": 1, "text": path.read_text()}})
        server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                        and m["params"]["uri"] == path.as_uri() and m["params"]["diagnostics"], "diagnostics")
        said = json.dumps(server.received)
        assert "not a regular file" in said
        hover = server.call("textDocument/hover", {"textDocument": {"uri": path.as_uri()},
                                                   "position": {"line": 3, "character": 7}})
        assert hover.get("result")
        assert "result" in server.call("shutdown")
        server.notify("exit")
