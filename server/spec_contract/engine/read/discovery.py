"""Which project a file or folder belongs to: the one rule the CLI and the language server share.

From any path, walk up to the project and analyse all of it (a wrapper's inner model, its bases and the
workers usually live elsewhere in the tree), in this order:

1. the nearest ``pyproject.toml`` with a ``[tool.spec-contract]`` table;
2. else the nearest ancestor that holds the profile's workers: the top of the ``__init__.py`` package chain,
   then the folder above it (repository layouts such as ``python/sglang/…``);
3. else the repository root (the nearest folder with ``.git``);
4. else out-of-tree mode: the package (or the given folder) alone, with the contract and the engine's
   classes read from the engine installed for ``--python``.

:data:`RULE` says the same in two sentences for ``--help`` and the README.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from spec_contract.engine.read.files import glob_match, read_bytes
from spec_contract.engine.read.listing import Listings, walk

RULE = ("The project is found by walking up from each PATH: the nearest pyproject.toml with a "
        "[tool.spec-contract] table, else the top of the __init__.py package chain (or the folder above it) "
        "when it holds the profile's workers, else the repository root (.git), else out-of-tree mode with the "
        "engine read from --python. The whole project is analysed, and only the classes defined in the given "
        "paths are reported.")

# Folders whose subtrees are never a project's own code: walking one to look for workers costs seconds.
_SKIPPED = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".tox", ".mypy_cache",
            ".pytest_cache", ".ruff_cache"}
_ENVIRONMENTS = {"site-packages", "dist-packages"}


@dataclass(frozen=True)
class Found:
    """A project root and which step of the rule chose it."""

    root: Path
    reason: str  # "pyproject", "workers", "repository" or "out-of-tree"

    def describe(self) -> str:
        """Why this root, for messages: "/x/sglang (holds the profile's workers)"."""
        why = {
            "pyproject": "nearest pyproject.toml with [tool.spec-contract]",
            "workers": "holds the profile's workers",
            "repository": "repository root",
            "out-of-tree": "no project found above it: out-of-tree mode",
        }[self.reason]
        return f"{self.root} ({why})"


def has_table(pyproject: Path) -> bool:
    """Whether a ``pyproject.toml`` names a ``[tool.spec-contract]`` table; a cheap byte test first, so an
    unrelated (or broken) pyproject above the project is never parsed. A broken one that does name the
    table raises :class:`~spec_contract.engine.config.ConfigError` from the config loader."""
    data = read_bytes(str(pyproject))  # a FIFO named pyproject.toml must not block the walk up
    if isinstance(data, str) or b"spec-contract" not in data:
        return False
    from spec_contract.engine.config import pyproject_table

    return pyproject_table(pyproject.parent) is not None


def is_project(folder: str) -> bool:
    """Whether ``folder`` is a project root of its own: its ``pyproject.toml`` has a ``[tool.spec-contract]``."""
    return has_table(Path(folder) / "pyproject.toml")


def nested_projects(folder: Path, exclude: tuple[str, ...], listings: Listings | None = None) -> list[Path]:
    """The project roots below ``folder`` (at any depth; ``folder`` itself not included), in walk order: each
    is analysed as its own project, and the project around it leaves its tree out (see ``discover``)."""
    return [Path(dirpath) for dirpath, filenames in _walk(folder, exclude, listings)
            if dirpath != str(folder) and "pyproject.toml" in filenames and is_project(dirpath)]


def _walk(folder: Path, exclude: tuple[str, ...], listings: Listings | None) -> Iterator[tuple[str, list[str]]]:
    """Each folder under ``folder`` with its file names, past the folders no project's code is in."""
    top = str(folder)
    for dirpath, dirnames, filenames in walk(top, listings):
        rel_dir = dirpath[len(top) + 1:].replace(os.sep, "/")
        rel_dir = rel_dir + "/" if rel_dir else ""
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED and not d.endswith(".egg-info")
                             and not glob_match(rel_dir + d + "/", exclude))
        yield dirpath, filenames


def holds_workers(folder: Path, workers: tuple[str, ...], exclude: tuple[str, ...],
                  listings: Listings | None = None) -> bool:
    """Whether some file under ``folder`` matches the worker globs (stops at the first)."""
    top = str(folder)
    for dirpath, filenames in _walk(folder, exclude, listings):
        rel_dir = dirpath[len(top) + 1:].replace(os.sep, "/")
        rel_dir = rel_dir + "/" if rel_dir else ""
        if any(name.endswith(".py") and glob_match(rel_dir + name, workers) for name in filenames):
            return True
    return False


def find_project(path: Path, workers: tuple[str, ...], exclude: tuple[str, ...],
                 listings: Listings | None = None) -> Found:
    """The project ``path`` (a file or folder, which need not exist yet) belongs to; see the module docstring.

    ``workers`` and ``exclude`` are the profile's globs (with ``--config`` or editor overrides applied),
    used by step 2 only: a project with its own table names its workers itself. ``listings``: the run's
    folder listings, when it keeps them for its later walks.
    """
    start = Path(os.path.abspath(path))
    folder = start if start.is_dir() else start.parent
    chain = [folder, *folder.parents]
    for candidate in chain:
        if (candidate / "pyproject.toml").is_file() and has_table(candidate / "pyproject.toml"):
            return Found(candidate, "pyproject")
    top = package_top(folder)
    for candidate in ([top, top.parent] if top is not None else [folder]):
        if candidate.name in _ENVIRONMENTS or candidate.parent == candidate:
            continue
        if holds_workers(candidate, workers, exclude, listings):
            return Found(candidate, "workers")
    for candidate in chain:
        if (candidate / ".git").exists():
            return Found(candidate, "repository")
    return Found(top or folder, "out-of-tree")


def package_top(folder: Path) -> Path | None:
    """The outermost package above ``folder`` (or ``folder`` itself): climb while folders hold an
    ``__init__.py``. Folders without one below the first package are namespace packages (SGLang's
    ``srt/models``), so the climb starts at the first package found, never beyond a repository root."""
    top = None
    for candidate in [folder, *folder.parents]:
        if (candidate / "__init__.py").is_file():
            top = candidate
        elif top is not None or (candidate / ".git").exists():
            break
    return top
