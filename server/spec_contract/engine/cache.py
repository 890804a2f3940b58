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

import hashlib
import os
import pickle
import shutil
import stat
import tempfile
from pathlib import Path

from spec_contract import __version__
from spec_contract.engine.summarise.summary import ModuleSummary

# Bumped when the layout of an entry changes; part of every entry's header.
_MAGIC = b"spec-contract cache 2\n"
_CHECKSUM_BYTES = 32
# What the pipeline always saves (``Pipeline._save``): a results entry without one of these is not used.
RESULT_KEYS = frozenset({"contract", "checked", "registered", "digests"})


def engine_fingerprint(engine: Path = Path(__file__).parent) -> str:
    """A digest of the engine's own source, its stage folders included (``summarise/``, ``check/`` …), and of
    the profiles: summaries and results made by other code are never reused, even between two builds that
    carry the same version number (a development checkout)."""
    digest = hashlib.sha1(__version__.encode())
    for source in sorted(engine.rglob("*.py")) + sorted((engine.parent / "profiles").glob("*.toml")):
        digest.update(source.relative_to(engine.parent).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def default_dir() -> Path:
    base = os.environ.get("SPEC_CONTRACT_CACHE_DIR")
    if not base:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(home, "spec-contract")
    return Path(base) / f"{__version__}-{engine_fingerprint()}"


def _checksum(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=_CHECKSUM_BYTES).digest()


def encode_entry(value: object) -> bytes:
    """The bytes of a cache entry holding ``value``: header, checksum of the pickle, the pickle."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _MAGIC + _checksum(payload) + payload


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
        name = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
        return self.directory / name[:2] / f"{name[2:]}.pickle"

    def _results_path(self, key: str) -> Path:
        name = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
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
        self._store(self._results_path(key), results)

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

    def _store(self, target: Path, value: object) -> None:
        if not self._usable:
            return
        try:
            data = encode_entry(value)
        except (pickle.PicklingError, RecursionError):  # a summary too deep to pickle: it is made again next run
            return
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
        except OSError:
            self._usable = False  # read-only home, full disk: carry on without persisting
            if tmp is not None:
                self._drop(Path(tmp))
