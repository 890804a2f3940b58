"""Globs of relative paths (``**/models/*.py``) as regexes that cannot backtrack for ever.

The globs come from profiles and from ``[tool.spec-contract]``, which a cloned repository chooses. Compiled
naively, each ``*`` is a quantifier the regex engine may try at every position: a run of 25 ``*`` spun
``check`` (and the server) for ever, and ``*a*a*a*a*a*a*a*a*a*ab`` took minutes on one path. So a glob is
first normalised (a run of ``*`` is one wildcard, ``**/**`` is ``**``), and every wildcard but the last of its
kind is compiled *atomic*: it takes the shortest stretch after which the fixed part that follows it matches,
and is never tried again. For wildcards that cannot cross the same boundaries, that first fit is as good as
any other (the classic argument ``fnmatch`` relies on too): a ``*`` within its path segment, and a ``**/``
before the whole segments up to the next ``**/``. Each wildcard then costs one scan, not a nested search.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

_COMBINED: dict[tuple[str, ...], re.Pattern[str]] = {}
_STAR_RUN = re.compile(r"\*{3,}")
_ANY_FOLDERS = "(?:.*/)?"  # ``**/``: no folder, or any folders


def glob_match(rel: str, globs: tuple[str, ...]) -> bool:
    """``**``-aware matching of a relative posix path (``PurePosixPath.full_match`` needs 3.13)."""
    combined = _COMBINED.get(globs)
    if combined is None:  # one alternation per glob list: one regex match per path, however many globs
        combined = _COMBINED[globs] = re.compile(
            "|".join(f"(?:{glob_regex(g, f'g{i}')})" for i, g in enumerate(globs)) or r"(?!)")
    return combined.match(rel) is not None


def normalised_glob(glob: str) -> str:
    """``glob`` with each run of ``*`` as one wildcard (``**``) and each run of ``**/`` segments as one:
    what it matches is unchanged."""
    glob = _STAR_RUN.sub("**", glob)
    while "**/**" in glob:  # any folders, then any path: any path
        glob = glob.replace("**/**", "**")
    return glob


def glob_regex(glob: str, name: str) -> str:
    """The regex of one glob (anchored at the end); ``name`` prefixes its group names, unique per pattern."""
    counter = itertools.count()

    def atomic(pattern: str) -> str:  # the first fit of ``pattern``, never revisited
        group = f"{name}_{next(counter)}"
        return f"(?=(?P<{group}>{pattern}))(?P={group})"

    glob = normalised_glob(glob)
    segments = glob.split("/")
    if any("**" in s and s != "**" for s in segments):  # ``x**``: crosses folders, so no first fit is safe
        return _plain(glob)
    pieces: list[str] = []  # one per segment; _ANY_FOLDERS for a ``**/``
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            pieces.append(".*" if last else _ANY_FOLDERS)
        else:
            pieces.append(_segment(segment, atomic) + ("" if last else "/"))
    out = []
    for i, piece in enumerate(pieces):
        if piece == _ANY_FOLDERS and _ANY_FOLDERS in pieces[i + 1:]:  # not the last: the segments up to the next
            following = pieces[i + 1:pieces.index(_ANY_FOLDERS, i + 1)]
            out.append(atomic("(?:[^/]*/)*?" + "".join(following)))
            pieces[i + 1:i + 1 + len(following)] = [""] * len(following)
        else:
            out.append(piece)
    return "".join(out) + r"\Z"


def _segment(text: str, atomic: Callable[[str], str]) -> str:
    """One path segment's pattern (no ``**`` in it): ``*`` within it, ``?`` one character."""
    chunks = [_literal(chunk) for chunk in text.split("*")]
    if len(chunks) == 1:
        return chunks[0]
    middle = "".join(atomic(f"[^/]*?{chunk}") for chunk in chunks[1:-1])
    return chunks[0] + middle + "[^/]*" + chunks[-1]


def _plain(glob: str) -> str:
    """The glob wildcard by wildcard, for the rare one with ``**`` inside a segment (``x**/y``, ``a**b``)."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append(_ANY_FOLDERS)
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            out.append("[^/]*" if glob[i] == "*" else _literal(glob[i]))
            i += 1
    return "".join(out) + r"\Z"


def _literal(text: str) -> str:
    return "".join("[^/]" if c == "?" else re.escape(c) for c in text)
