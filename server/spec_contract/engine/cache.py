"""A persistent cache of module summaries and analysis results, keyed by content.

Entries live under the user cache directory (``$SPEC_CONTRACT_CACHE_DIR``, else ``$XDG_CACHE_HOME/spec-contract``
or ``~/.cache/spec-contract``), in a folder named by the version and a digest of the engine's own source, one
pickle per key: other engine code uses another folder, so old summaries and results are never misread.
Writers go through a temporary file and ``os.replace``, so concurrent runs never see a half-written entry; a
corrupt or foreign entry is a miss.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from spec_contract import __version__
from spec_contract.engine.summary import ModuleSummary

def engine_fingerprint() -> str:
    """A digest of the engine's own source: summaries and results made by other code are never reused,
    even between two builds that carry the same version number (a development checkout)."""
    digest = hashlib.sha1(__version__.encode())
    engine = Path(__file__).parent
    for source in sorted(engine.glob("*.py")) + sorted((engine.parent / "profiles").glob("*.toml")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def default_dir() -> Path:
    base = os.environ.get("SPEC_CONTRACT_CACHE_DIR")
    if not base:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(home, "spec-contract")
    return Path(base) / f"{__version__}-{engine_fingerprint()}"


class SummaryCache:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_dir()
        self._usable = True

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key[2:]}.pickle"

    def get(self, key: str) -> ModuleSummary | None:
        value = self._load(self._path(key))
        return value if isinstance(value, ModuleSummary) else None

    def get_results(self, key: str) -> dict | None:
        """The saved results of a whole analysis (see ``Project._save``), or None."""
        value = self._load(self.directory / "results" / f"{key}.pickle")
        return value if isinstance(value, dict) else None

    def put_results(self, key: str, results: dict) -> None:
        self._store(self.directory / "results" / f"{key}.pickle", results)

    def has(self, key: str) -> bool:
        return self._path(key).is_file()

    def put(self, key: str, summary: ModuleSummary) -> None:
        self._store(self._path(key), summary)

    def _load(self, path: Path) -> object:
        try:
            with open(path, "rb") as handle:
                return pickle.load(handle)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
            return None

    def _store(self, target: Path, value: object) -> None:
        if not self._usable:
            return
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except OSError:
            self._usable = False  # read-only home, full disk: carry on without persisting
