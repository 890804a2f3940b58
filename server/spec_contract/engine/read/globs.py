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

# a glob list → (the text one of its regular globs needs, or None; their alternation; the rare globs' tokens)
_COMBINED: dict[tuple[str, ...], tuple[re.Pattern[str] | None, re.Pattern[str], tuple[tuple[str, ...], ...]]] = {}
_STAR_RUN = re.compile(r"\*{3,}")
_ANY_FOLDERS = "(?:.*/)?"  # ``**/``: no folder, or any folders
_WILDCARD = re.compile(r"\*\*/|\*+|\?")  # what splits a glob into the literal text its matches hold


def glob_match(rel: str, globs: tuple[str, ...]) -> bool:
    """``**``-aware matching of a relative posix path (``PurePosixPath.full_match`` needs 3.13)."""
    matcher = _COMBINED.get(globs)
    if matcher is None:  # one alternation per glob list: one regex match per path, however many globs
        regular = [g for g in globs if not _inside_segment(normalised_glob(g))]
        rare = tuple(_tokens(normalised_glob(g)) for g in globs if _inside_segment(normalised_glob(g)))
        matcher = _COMBINED[globs] = (_needed(regular), re.compile(
            "|".join(f"(?:{glob_regex(g, f'g{i}')})" for i, g in enumerate(regular)) or r"(?!)"), rare)
    needed, combined, rare = matcher
    if (needed is None or needed.search(rel) is not None) and combined.match(rel) is not None:
        return True
    return bool(rare) and any(_match_tokens(tokens, rel) for tokens in rare)  # no generator for the usual none


def _needed(globs: list[str]) -> re.Pattern[str] | None:
    """A search for text every match of one of ``globs`` holds (each glob's longest literal piece:
    ``models/`` of ``**/models/**/*.py``), or None when some glob has none. Most paths hold none of it, and
    one search for a few literals is a third of the cost of the full alternation it spares them (a warm
    check sorts SGLang's 3,242 files by three glob lists)."""
    pieces = [max(_WILDCARD.split(normalised_glob(glob)), key=len) for glob in globs]
    if not pieces or not all(pieces):
        return None
    return re.compile("|".join(re.escape(piece) for piece in dict.fromkeys(pieces)))


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
    if _inside_segment(glob):  # ``x**``: crosses folders, so no first fit is safe (see _match_tokens)
        raise ValueError(f"{glob!r} has ** inside a segment: match it with _match_tokens")
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


def _inside_segment(glob: str) -> bool:
    """Whether ``glob`` has ``**`` inside a segment (``x**/y``, ``a**b``): a wildcard that crosses folders."""
    return any("**" in segment and segment != "**" for segment in glob.split("/"))


def _tokens(glob: str) -> tuple[str, ...]:
    """The glob's wildcards and characters, one token each: ``**/`` (any folders), ``**`` (anything),
    ``*`` (anything within a segment), ``?`` (one character but ``/``), or a literal character."""
    out, i = [], 0
    while i < len(glob):
        for token in ("**/", "**", "*"):
            if glob.startswith(token, i):
                out.append(token)
                i += len(token)
                break
        else:
            out.append(glob[i])
            i += 1
    return tuple(out)


def _match_tokens(tokens: tuple[str, ...], path: str) -> bool:
    """Whether the whole ``path`` matches ``tokens``, for the rare glob with ``**`` inside a segment: no
    first fit is safe there, so rather than a regex that backtracks (``a**a**a**…b`` grows exponentially),
    the set of path positions reachable after each token is carried forward: O(tokens × path²) at worst."""
    positions = {0}
    for token in tokens:
        following: set[int] = set()
        for start in positions:
            if token == "**":
                following.update(range(start, len(path) + 1))
            elif token == "**/":  # no folder, or any folders up to a "/"
                following.add(start)
                following.update(j + 1 for j in range(start, len(path)) if path[j] == "/")
            elif token == "*":
                end = path.find("/", start)
                following.update(range(start, (len(path) if end < 0 else end) + 1))
            elif start < len(path) and (path[start] == token or (token == "?" and path[start] != "/")):
                following.add(start + 1)
        positions = following
        if not positions:
            return False
    return len(path) in positions


def _literal(text: str) -> str:
    return "".join("[^/]" if c == "?" else re.escape(c) for c in text)
