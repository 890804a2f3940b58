"""A damaged summary cache is a miss, never a crash and never a wrong answer.

The cache is filled by a real run over a copy of ``examples/demo``; then each of its files in turn (and all
of them at once) is overwritten with random bytes, truncated, or has one bit flipped, and the next analysis
must give exactly what an analysis without the cache gives, and so must the one after (the bad entry was
dropped and written again). A few runs go through the real command, where a crash would show as a
traceback and exit code 1 that CI reads as "findings".
"""

from __future__ import annotations

import os
import pickle
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from spec_contract.engine.cache import RESULT_KEYS, SummaryCache, decode_entry, encode_entry
from spec_contract.engine.config import load_config
from spec_contract.engine.project import Project

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo"


def outcome(analysis) -> tuple:
    """Everything a report prints: findings with their positions and call sites, and the contract."""
    findings = tuple((f.code, f.path, f.span, f.class_name, f.member, f.roles, f.delegate, f.inner_class,
                      f.severity, tuple((s.path, s.span.line) for s in f.call_sites)) for f in analysis.findings)
    contract = tuple((e.role, e.member, e.required, tuple((s.path, s.span.line) for s in e.call_sites))
                     for e in analysis.contract.entries)
    return findings, contract


def analyze(root: Path, cache: Path | None) -> tuple:
    project = Project(root, load_config(root), use_cache=cache is not None, cache_dir=cache)
    return outcome(project.analyze())


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corrupt") / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module")
def expected(tree: Path) -> tuple:
    return analyze(tree, None)


def filled_cache(tree: Path, directory: Path, expected: tuple) -> list[Path]:
    """A cache as a cold run leaves it; returns its entry files (summaries and the results entry)."""
    assert analyze(tree, directory) == expected
    entries = sorted(p for p in directory.rglob("*") if p.is_file())
    assert any(p.parent.name == "results" for p in entries) and len(entries) > 2
    return entries


def corruptions(data: bytes, rng: random.Random) -> list[tuple[str, bytes]]:
    """Ways one entry's bytes get damaged: replaced, cut short, one bit flipped (header, checksum, pickle)."""
    out = [("random bytes, same length", rng.randbytes(len(data))),
           ("random bytes, 1 MB", rng.randbytes(1 << 20)),
           ("empty", b""),
           ("a pickle asking for 2**62 bytes", b"\x80\x04\x95" + (2 ** 62).to_bytes(8, "little") + b"B"),
           ("a bare pickle of the right object", pickle.dumps(decode_entry(data)))]
    for cut in sorted({1, 20, 60, len(data) // 2, len(data) - 1}):
        if 0 < cut < len(data):
            out.append((f"truncated to {cut} bytes", data[:cut]))
    positions = sorted({0, 5, 25, 30, 40, 60, len(data) - 1} | {rng.randrange(len(data)) for _ in range(10)})
    for position in positions:
        if position < len(data):
            flipped = bytearray(data)
            flipped[position] ^= 1 << rng.randrange(8)
            out.append((f"bit flipped at byte {position}", bytes(flipped)))
    return out


def test_every_damaged_entry_is_a_miss_and_is_rebuilt(tree, expected, tmp_path):
    rng = random.Random(14)
    directory = tmp_path / "cache"
    entries = filled_cache(tree, directory, expected)
    cases = 0
    for entry in entries:
        good = entry.read_bytes()
        for name, damaged in corruptions(good, rng):
            entry.write_bytes(damaged)
            assert analyze(tree, directory) == expected, f"{entry.name}: {name}"
            assert analyze(tree, directory) == expected, f"{entry.name}: {name}, the run after"
            cases += 1
            entry.write_bytes(good)
    assert cases > 100


def test_all_entries_damaged_at_once(tree, expected, tmp_path):
    rng = random.Random(15)
    directory = tmp_path / "cache"
    entries = filled_cache(tree, directory, expected)
    for round in range(3):
        for entry in entries:
            if entry.exists():
                data = entry.read_bytes()
                entry.write_bytes([rng.randbytes(len(data)), data[: len(data) // 2], b""][round])
        assert analyze(tree, directory) == expected
        # Dropped and written again: the next run finds intact entries and uses them.
        project = Project(tree, load_config(tree), cache_dir=directory)
        assert outcome(project.analyze()) == expected
        assert project.analyze().stats.files_parsed == 0


def test_intact_entries_of_the_wrong_shape_are_not_used(tree, expected, tmp_path):
    """An entry that passes the checksum but holds the wrong thing: a results entry without its keys (the
    ``KeyError: 'checked'`` of issue 14), or a summary's place taken by another object."""
    directory = tmp_path / "cache"
    entries = filled_cache(tree, directory, expected)
    results = next(p for p in entries if p.parent.name == "results")
    intact = results.read_bytes()
    for missing in sorted(RESULT_KEYS):
        results.write_bytes(intact)
        saved = decode_entry(results.read_bytes())
        del saved[missing]
        results.write_bytes(encode_entry(saved))
        assert analyze(tree, directory) == expected, missing
    results.write_bytes(encode_entry(["not", "a", "dict"]))
    assert analyze(tree, directory) == expected
    results.unlink()
    for entry in entries:
        if entry.parent.name != "results":
            entry.write_bytes(encode_entry({"imports": None}))
    assert analyze(tree, directory) == expected


def test_a_fifo_or_a_directory_in_place_of_an_entry_does_not_block_or_crash(tree, expected, tmp_path):
    directory = tmp_path / "cache"
    entries = filled_cache(tree, directory, expected)
    summaries = [p for p in entries if p.parent.name != "results"]
    os.unlink(summaries[0])
    os.mkfifo(summaries[0])
    summaries[1].unlink()
    summaries[1].mkdir()
    for results in [p for p in entries if p.parent.name == "results"]:
        results.unlink()
    assert analyze(tree, directory) == expected


def test_cache_keys_name_no_path_outside_the_cache(tmp_path):
    """A key holds configuration text (the entry-class variable), which a hostile pyproject chooses."""
    cache = SummaryCache(tmp_path / "cache")
    cache.put_results("../../escaped", {key: {} for key in RESULT_KEYS})
    cache.put("ab/../../../escaped", None)
    assert {p.name for p in tmp_path.iterdir()} == {"cache"}


def test_the_command_with_a_damaged_cache_prints_what_no_cache_prints(tree, tmp_path):
    directory = tmp_path / "cache"
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(directory)}

    def check(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "spec_contract", "check", str(tree), "--format", "json", *extra],
                              capture_output=True, text=True, env=env, timeout=120)

    def findings(result: subprocess.CompletedProcess) -> str:
        return result.stdout.split('"stats"')[0]  # the timing figures differ from run to run

    reference = check("--no-cache")
    assert reference.returncode == 1 and not reference.stderr
    assert check().returncode == 1  # fills the cache
    rng = random.Random(16)
    for damage in (lambda data: rng.randbytes(len(data)), lambda data: data[: len(data) // 3],
                   lambda data: data[:-1] + bytes([data[-1] ^ 0x10])):
        for entry in (p for p in directory.rglob("*") if p.is_file()):
            entry.write_bytes(damage(entry.read_bytes()))
        result = check()
        assert (result.returncode, result.stderr, findings(result)) == (1, "", findings(reference))


def test_a_change_in_any_engine_stage_folder_is_another_cache(tmp_path):
    """Summaries written by other engine code are never read: the cache's name digests every engine module,
    those in its stage folders (``summarise/``, ``check/`` …) too, not only the top-level ones."""
    from spec_contract.engine import cache

    engine = Path(cache.__file__).parent
    copy = tmp_path / "spec_contract"
    shutil.copytree(engine, copy / "engine")
    shutil.copytree(engine.parent / "profiles", copy / "profiles")
    before = cache.engine_fingerprint(copy / "engine")
    assert before == cache.engine_fingerprint(engine)  # the same code, wherever it lies
    statements = copy / "engine" / "summarise" / "statements.py"
    statements.write_text(statements.read_text() + "\n# another build\n")
    assert cache.engine_fingerprint(copy / "engine") != before


def test_the_engine_digest_kept_by_file_signatures_follows_every_edit(tmp_path):
    """The digest a warm run reads from its memo (names, sizes, modification times) is always the digest of
    the text there: an edit of the same length, a memo folder with garbage or a FIFO in it change nothing."""
    from spec_contract.engine import cache

    engine = Path(cache.__file__).parent
    copy = tmp_path / "spec_contract"
    shutil.copytree(engine, copy / "engine")
    shutil.copytree(engine.parent / "profiles", copy / "profiles")
    memo = tmp_path / "memo"
    first = cache.engine_fingerprint(copy / "engine", memo)
    assert first == cache.engine_fingerprint(engine) and len(list(memo.iterdir())) == 1
    assert cache.engine_fingerprint(copy / "engine", memo) == first
    statements = copy / "engine" / "summarise" / "statements.py"
    text = statements.read_text()
    statements.write_text(text.replace("the", "THE", 1))  # the same size
    os.utime(statements, ns=(statements.stat().st_atime_ns, statements.stat().st_mtime_ns + 1))
    edited = cache.engine_fingerprint(copy / "engine")
    assert edited != first and cache.engine_fingerprint(copy / "engine", memo) == edited
    for kept in memo.iterdir():
        kept.write_bytes(b"garbage\n")
    assert cache.engine_fingerprint(copy / "engine", memo) == edited
    for kept in memo.iterdir():
        kept.unlink()
        os.mkfifo(kept)  # never opened for a blocking read
    assert cache.engine_fingerprint(copy / "engine", memo) == edited
