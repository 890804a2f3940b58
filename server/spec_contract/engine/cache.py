"""A persistent cache of module summaries, keyed by content hash and scan mode.

Entries live under the user cache directory (``$SPEC_CONTRACT_CACHE_DIR``, else ``$XDG_CACHE_HOME`` or
``~/.cache``, then ``spec-contract/<version>/``), one pickle per key. Writers go through a temporary file and
``os.replace``, so concurrent runs never see a half-written entry; a corrupt or foreign entry is a miss. A
new version of the package uses a new directory, so old summaries are never misread.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path

from spec_contract import __version__
from spec_contract.engine.summary import ModuleSummary

_FORMAT = 1


def default_dir() -> Path:
    explicit = os.environ.get("SPEC_CONTRACT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spec-contract" / f"{__version__}-{_FORMAT}"


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
