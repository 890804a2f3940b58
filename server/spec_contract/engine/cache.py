"""A persistent cache of module summaries and analysis results, keyed by content.

Entries live under the user cache directory (``$SPEC_CONTRACT_CACHE_DIR``, else ``$XDG_CACHE_HOME/spec-contract``
or ``~/.cache/spec-contract``), in a folder named by the version and a digest of the engine's own source, one
file per key: other engine code uses another folder, so old summaries and results are never misread.
Writers go through a temporary file and ``os.replace``, so concurrent runs never see a half-written entry.

A cache is only ever a shortcut, so nothing read from it is trusted: each entry is a header (a magic string
with the entry format's version) and a BLAKE2b checksum, then the pickle. An entry whose header or checksum
does not match (a disk error, a truncated copy, a hand edit, random bytes) is never unpickled: unpickling
such bytes can ask for gigabytes (``MemoryError``), overflow, or load as some other object that breaks the
analysis later. It is deleted and counts as a miss, so the run rebuilds it; no cache content can end a run.
"""

from __future__ import annotations

import io
import os
import pickle
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

from spec_contract import __version__
from spec_contract.engine.digests import blake2b
from spec_contract.engine.results import CallSite, Provider
from spec_contract.engine.summarise.summary import ModuleSummary

# Bumped when the layout of an entry changes; part of every entry's header.
_MAGIC = b"spec-contract cache 2\n"
_CHECKSUM_BYTES = 32
# What the pipeline always saves (``Pipeline._save``): a results entry without one of these is not used.
RESULT_KEYS = frozenset({"contract", "checked", "registered", "digests"})
_FINGERPRINT_CHARS = 12  # of the engine digest, in the cache folder's name


def engine_fingerprint(engine: Path = Path(__file__).parent, memo: Path | None = None) -> str:
    """A digest of the engine's own source, its stage folders included (``summarise/``, ``check/`` …), and of
    the profiles: summaries and results made by other code are never reused, even between two builds that
    carry the same version number (a development checkout).

    Reading and hashing the ~80 files took 2.5 ms of every warm run, so with a ``memo`` folder the digest is
    kept there under the files' names, sizes, modification times and inodes, and read back while those are
    unchanged: the trust a warm run puts in the tree's files (``read.sources``), and Python in its bytecode
    cache. An edit gives another signature, hence the digest of the new text."""
    sources = _engine_sources(engine)
    kept = memo / signature if memo is not None and (signature := _signature(engine, sources)) else None
    if kept is not None:  # the digest, then the signature again: a damaged memo is never taken for a digest
        known = _read_regular(kept)
        if known is not None and len(known) == _FINGERPRINT_CHARS + 1 + len(kept.name) \
                and known.endswith(f" {kept.name}".encode()) and known[:_FINGERPRINT_CHARS].isalnum():
            return known[:_FINGERPRINT_CHARS].decode()
    digest = blake2b(__version__.encode(), digest_size=20)
    for relative, path in sources:
        digest.update(relative.encode())
        with open(path, "rb") as handle:
            digest.update(handle.read())
    fingerprint = digest.hexdigest()[:_FINGERPRINT_CHARS]
    if kept is not None:
        _write_atomically(kept, f"{fingerprint} {kept.name}".encode())
    return fingerprint


def _signature(engine: Path, sources: list[tuple[str, str]]) -> str | None:
    """A digest of where the engine is and of each source file's name, size, modification time and inode;
    None when a file went while it was listed (the content digest then says what is there)."""
    parts = [str(engine)]
    try:
        for relative, path in sources:
            info = os.stat(path)
            parts.append(f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}")
    except OSError:
        return None
    return blake2b("\0".join(parts).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def _engine_sources(engine: Path) -> list[tuple[str, str]]:
    """The engine's ``.py`` files at any depth and the profiles, as (path relative to the package, path), in
    the order of the sorted paths (the digest's order)."""
    found: list[tuple[str, str]] = []
    folders = [(str(engine), engine.name)]
    while folders:
        folder, relative = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir():
                    if entry.name != "__pycache__":
                        folders.append((entry.path, f"{relative}/{entry.name}"))
                elif entry.name.endswith(".py"):
                    found.append((f"{relative}/{entry.name}", entry.path))
    profiles = engine.parent / "profiles"
    with os.scandir(profiles) as entries:
        toml = sorted((f"profiles/{e.name}", e.path) for e in entries if e.name.endswith(".toml") and e.is_file())
    return sorted(found, key=lambda source: source[0].split("/")) + toml


def default_dir() -> Path:
    base = os.environ.get("SPEC_CONTRACT_CACHE_DIR")
    if not base:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(home, "spec-contract")
    return Path(base) / f"{__version__}-{engine_fingerprint(memo=Path(base) / 'fingerprints')}"


def _checksum(payload: bytes) -> bytes:
    return blake2b(payload, digest_size=_CHECKSUM_BYTES).digest()


def encode_entry(value: object, shared: tuple[type, ...] = ()) -> bytes:
    """The bytes of a cache entry holding ``value``: header, checksum of the pickle, the pickle. Equal
    instances of the ``shared`` types (hashable, immutable) are pickled once and load as one object."""
    if shared:
        buffer = io.BytesIO()
        _SharingPickler(buffer, shared).dump(value)
        payload = buffer.getvalue()
    else:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _MAGIC + _checksum(payload) + payload


def _same(value: object) -> object:
    """What a repeat of a shared value loads as: the value loaded first (see :class:`_SharingPickler`)."""
    return value


class _SharingPickler(pickle.Pickler):
    """Pickles each value of the ``shared`` types once, however many equal copies the data holds: a run's
    findings each carry their call sites and provider, made afresh per class (SGLang 0.5.23's 415 findings:
    842 call sites of 26 values, 415 providers of 58), and each copy took loading again on every warm run.
    A repeat is pickled as a call returning the first, which pickle's memo writes as a reference."""

    def __init__(self, file: io.BytesIO, shared: tuple[type, ...]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._shared = shared
        self._first: dict[object, object] = {}

    def reducer_override(self, obj: object) -> Any:  # a reduce value, or NotImplemented: pickle as usual
        if type(obj) in self._shared:
            first = self._first.setdefault(obj, obj)
            if first is not obj:
                return _same, (first,)
        return NotImplemented


def decode_entry(data: bytes) -> object | None:
    """The value an entry's bytes hold, or None when they are not an intact entry of this format."""
    start = len(_MAGIC) + _CHECKSUM_BYTES
    if not data.startswith(_MAGIC) or len(data) <= start:
        return None
    payload = data[start:]
    if _checksum(payload) != data[len(_MAGIC):start]:
        return None
    try:
        return pickle.loads(payload)
    except Exception:  # an intact entry whose classes changed shape (an engine edited without a new digest)
        return None


def _read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (a FIFO in the cache folder must not block a run)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except (OSError, MemoryError):
        return None
    finally:
        os.close(fd)


class SummaryCache:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_dir()
        self._usable = True

    def _path(self, key: str) -> Path:
        # Keys hold configuration text (the entry-class variable): hashed, they can name no other path.
        name = blake2b(key.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
        return self.directory / name[:2] / f"{name[2:]}.pickle"

    def _results_path(self, key: str) -> Path:
        name = blake2b(key.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
        return self.directory / "results" / f"{name}.pickle"

    def get(self, key: str) -> ModuleSummary | None:
        value = self._load(self._path(key))
        return value if isinstance(value, ModuleSummary) else None

    def get_results(self, key: str) -> dict | None:
        """The saved results of a whole analysis (see ``results_store``), or None."""
        path = self._results_path(key)
        value = self._load(path)
        if value is None:
            return None
        if not isinstance(value, dict) or not RESULT_KEYS <= value.keys():
            self._drop(path)
            return None
        return value

    def put_results(self, key: str, results: dict) -> None:
        self._store(self._results_path(key), results, shared=(CallSite, Provider))

    def has(self, key: str) -> bool:
        return self._path(key).is_file()

    def put(self, key: str, summary: ModuleSummary) -> None:
        self._store(self._path(key), summary)

    def _load(self, path: Path) -> object:
        data = _read_regular(path)
        if data is None:
            return None
        value = decode_entry(data)
        if value is None:
            self._drop(path)
        return value

    def _drop(self, path: Path) -> None:
        """Delete a bad entry, so that ``has`` no longer counts it and this run writes a good one."""
        try:
            os.unlink(path)
        except OSError:
            pass  # a directory in its place, a read-only cache: it stays a miss

    def _store(self, target: Path, value: object, shared: tuple[type, ...] = ()) -> None:
        if not self._usable:
            return
        try:
            data = encode_entry(value, shared)
        except (pickle.PicklingError, RecursionError):  # a summary too deep to pickle: it is made again next run
            return
        if not _write_atomically(target, data):
            self._usable = False  # read-only home, full disk: carry on without persisting


def _write_atomically(target: Path, data: bytes) -> bool:
    """Write ``data`` to ``target`` through a temporary file and ``os.replace``; False when the disk refused."""
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if target.is_dir() and not target.is_symlink():
            # a folder where this entry belongs (a stray mkdir, a bad copy): os.replace cannot replace it,
            # and the cache would stop for good. It is the cache's own name, so the entry takes its place.
            shutil.rmtree(target)
        os.replace(tmp, target)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
