"""Folder listings taken once for one run, however many walks of the tree read them.

A check walks its tree three times before it reads a file: up to the first worker (which project a PATH
belongs to), through the whole of it (the projects nested in it), and through the whole of it again (its
files). Each folder is listed once, and the later walks read the listing (20 ms of a warm check on SGLang's
3,200 files). Listings are kept for one run only: the language server, whose trees change under it, walks
afresh each time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

# a folder's listing: its subfolder names, its other names, the subfolders that are symbolic links
_Listed = tuple[list[str], list[str], frozenset[str]]

# The kernel's own file systems, which no walk enters: a workspace folder ``/`` reached ``/proc/<pid>/cwd``, the
# folders of every other process (and stopped at a broken pyproject.toml in one), and ``/proc/<pid>/root``, the
# whole file system again; ``/sys`` and ``/dev`` are no one's project either.
_KERNEL = ("/proc", "/sys", "/dev")
_KERNEL_NAMES = frozenset(k[1:] for k in _KERNEL)


class Listings:
    """The folders listed so far in this run."""

    def __init__(self) -> None:
        self._listed: dict[str, _Listed | OSError] = {}

    def walk(self, top: str | os.PathLike[str], onerror: Callable[[OSError], object] | None = None,
             followlinks: bool = False) -> Iterator[tuple[str, list[str], list[str]]]:
        """What ``os.walk(top, onerror=onerror, followlinks=followlinks)`` yields, in its order, less the kernel's
        folders (:data:`_KERNEL`); as there, the caller may prune the folder names it is given to leave those
        subtrees out."""
        stack = [os.fspath(top)]
        while stack:
            dirpath = stack.pop()
            listed = self._listed.get(dirpath)
            if listed is None:
                listed = self._listed[dirpath] = _list(dirpath)
            if isinstance(listed, OSError):
                if onerror is not None:
                    onerror(listed)
                continue
            dirnames, filenames, links = list(listed[0]), list(listed[1]), listed[2]
            yield dirpath, dirnames, filenames
            folder = os.path.join(dirpath, "")  # os.walk's join of each subfolder, done once
            stack += [folder + name for name in reversed(dirnames) if followlinks or name not in links]


def walk(top: str | os.PathLike[str], listings: Listings | None, onerror: Callable[[OSError], object] | None = None,
         followlinks: bool = False) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` (top-down) without the kernel's folders, from ``listings`` when the run keeps them."""
    return (listings or Listings()).walk(top, onerror, followlinks)


def _list(dirpath: str) -> _Listed | OSError:
    """One folder's listing as ``os.walk`` takes it (a folder is what ``is_dir`` says, following links; a
    name whose type cannot be read is a file's) without the kernel's folders and links into them, or the
    error that stopped it."""
    dirnames: list[str] = []
    filenames: list[str] = []
    links: set[str] = set()
    try:
        with os.scandir(dirpath) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                (dirnames if is_dir else filenames).append(entry.name)
                if is_dir and _is_link(entry):
                    links.add(entry.name)
    except OSError as error:
        return error
    if links or not _KERNEL_NAMES.isdisjoint(dirnames):
        dirnames = [name for name in dirnames if not _in_kernel(os.path.join(dirpath, name))]
    return dirnames, filenames, frozenset(links)


def _in_kernel(folder: str) -> bool:
    """Whether ``folder`` is, or is a link into, one of the kernel's file systems."""
    real = os.path.realpath(folder)
    return any(real == top or real.startswith(top + "/") for top in _KERNEL)


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False
