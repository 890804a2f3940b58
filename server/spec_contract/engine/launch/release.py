"""The engine's release, read from its tree as data (never imported): the ``METADATA`` of the distribution
installed beside the package, else the ``__version__`` a wheel build writes into ``_version.py`` (or a
checkout keeps in ``version.py``). Preflight's first line and the support matrix's title name it.
"""

from __future__ import annotations

import re
from pathlib import Path

from spec_contract.engine.read.files import read_text

_VERSION = re.compile(r"^__version__\s*=\s*(?:version\s*=\s*)?['\"]([^'\"\n]+)['\"]", re.M)
_METADATA = re.compile(r"^Version:[ \t]*(\S+)", re.M)


def release(root: Path, package: str) -> str | None:
    """The release of the engine package at ``root`` (the package folder itself, or a folder holding it, as a
    checkout's ``python/`` holds ``sglang``); None when the tree does not say."""
    for folder in dict.fromkeys((root, root / package) if root.name != package else (root,)):
        for info in sorted(folder.parent.glob(f"{folder.name}-*.dist-info")):
            found = _METADATA.search(_text(info / "METADATA") or "")
            return found.group(1) if found else info.name[len(folder.name) + 1:-len(".dist-info")]
        for name in ("_version.py", "version.py"):
            found = _VERSION.search(_text(folder / name) or "")  # a statement in the first column: not a fallback's
            if found:
                return found.group(1)
    return None


def _text(path: Path) -> str | None:
    try:
        return read_text(path)
    except (OSError, UnicodeDecodeError):
        return None
