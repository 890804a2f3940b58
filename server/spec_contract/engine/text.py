"""Lines and positions in source text, counted as CPython's parser counts them.

Python breaks lines only at ``\\r\\n``, ``\\r`` and ``\\n``. ``str.splitlines`` also breaks at ``\\x0b``,
``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, which may stand in comments, strings or (the
form feed) on a line of their own; a line number computed one way and used the other way points one line
off for every such character above it. So every place that turns (line, column) into an offset — applying
fix edits, cutting a file into lines for the stub generator, the language server's copy of a buffer —
goes through this module.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the language server imports this module at start-up: no dataclasses for it
    from spec_contract.engine.results import TextEdit

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines without their endings; a text that ends with a line break has an empty last line."""
    return text.split("\n") if "\r" not in text else LINE_BREAK.split(text)


def lines_with_ends(text: str) -> list[str]:
    """The lines with their endings, as ``str.splitlines(keepends=True)`` would give them if it broke only
    where the parser does (so no empty last line after a final line break)."""
    lines = text.splitlines(keepends=True)  # several times faster, and the same lines when it broke only at
    # each ``\n`` (another break character adds a line, unless it ends the text, where it ends the last one)
    if "\r" not in text and len(lines) == text.count("\n") + (not text.endswith("\n") and text != ""):
        return lines
    return LineIndex(text).lines_with_ends()


class LineIndex:
    """Offsets of line starts in one text: (0-based line, code-point column) → offset."""

    def __init__(self, text: str) -> None:
        self.text = text
        if "\r" in text:
            self.starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
        else:  # the common case, several times faster than the regular expression
            self.starts = list(accumulate((len(line) + 1 for line in text.split("\n")), initial=0))[:-1]

    def lines_with_ends(self) -> list[str]:
        """See :func:`lines_with_ends`."""
        starts, text = self.starts, self.text
        lines = [text[start:end] for start, end in zip(starts, [*starts[1:], len(text)])]
        return lines[:-1] if not lines[-1] else lines  # the empty line after a final line break, or of ""

    def position(self, offset: int) -> tuple[int, int]:
        """The (0-based line, code-point column) of an offset."""
        line = bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]

    def offset(self, line: int, col: int) -> int:
        """The offset of a position; a line past the end is the end of the text, a column past the end of
        its line stays on that line (before its line break)."""
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        content_end = end
        while content_end > start and self.text[content_end - 1] in "\r\n":
            content_end -= 1
        return min(start + max(col, 0), content_end)


def replacement(old: str, new: str) -> tuple[int, int, int, int, str] | None:
    """The one edit that turns ``old`` into ``new``: (line, col, end line, end col) in ``old`` and the text to
    put there, found from the common start and end; None when they are equal. Whole-file transforms (libcst)
    then reach editors as a small edit, not a rewrite of the buffer."""
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    index = LineIndex(old)
    return (*index.position(start), *index.position(len(old) - end), new[start:len(new) - end])


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with non-overlapping edits (0-based lines, code-point columns) applied; positions are all taken from the original text, and insertions at one place
    keep their order."""
    index = LineIndex(text)
    located = sorted(
        ((index.offset(e.span.line, e.span.col), index.offset(e.span.end_line, e.span.end_col), i, e.new_text)
         for i, e in enumerate(edits)),
        reverse=True,
    )
    for start, end, _, new_text in located:
        text = text[:start] + new_text + text[end:]
    return text


def only_adds_lines(original: str, new: str) -> bool:
    """Whether ``new`` holds every line of ``original`` unchanged (line ending included) and in order, with
    only new lines between them: what a fix may do to a file.

    Three exceptions: the original's last line may gain the line break it lacked, and a line may be split in
    two where it had whitespace or nothing (``class W(Base): pass`` → ``class W(Base):`` and an indented
    ``pass``), the second part only gaining indentation (both from edits that add members); and the EAGLE-3
    decoder capture (:mod:`spec_contract.engine.check.capture`) may number a layer loop (``for layer in
    self.layers:`` → ``for i, layer in enumerate(self.layers):``) and pass
    ``aux_hidden_states=aux_hidden_states`` to a call, exactly those insertions into a line.
    """
    old_lines, new_lines = lines_with_ends(original), lines_with_ends(new)
    j = 0
    for i, line in enumerate(old_lines):
        last_unended = i == len(old_lines) - 1 and not line.endswith(("\n", "\r"))
        while j < len(new_lines):
            candidate = new_lines[j]
            if candidate == line or (last_unended and candidate.rstrip("\r\n") == line) or \
                    _capture_inserted(line, candidate):
                j += 1
                break
            if j + 1 < len(new_lines) and _split_from(line, candidate, new_lines[j + 1], last_unended):
                j += 2
                break
            j += 1
        else:
            return False
    return True


_NUMBERED = re.compile(r"\bfor i, (\w+) in enumerate\((.*)\):")


def _capture_inserted(line: str, candidate: str) -> bool:
    """Whether ``candidate`` is ``line`` with the decoder capture's insertions (see :func:`only_adds_lines`)."""
    if "aux_hidden_states=aux_hidden_states" not in candidate and "enumerate(" not in candidate:
        return False
    undone = _NUMBERED.sub(r"for \1 in \2:", candidate.replace(", aux_hidden_states=aux_hidden_states", ""))
    return undone != candidate and undone == line


def _split_from(line: str, head: str, tail: str, last_unended: bool) -> bool:
    """Whether ``head`` + ``tail`` are ``line`` split at whitespace, ``tail`` newly indented."""
    head_text = head.rstrip("\r\n")
    if head_text == head or not line.startswith(head_text):
        return False
    rest = line[len(head_text):].lstrip(" \t")
    moved = tail.lstrip(" \t")
    if not rest.strip() or moved == tail:
        return False
    return moved == rest or (last_unended and moved.rstrip("\r\n") == rest)
