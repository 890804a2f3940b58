"""Engine positions (0-based lines, code-point columns) ↔ LSP positions in the negotiated encoding.

The client picks the column unit at ``initialize`` (Neovim 0.11 chooses utf-8, VS Code utf-16, Emacs
utf-32), so a column is never simply a ``str`` index: every conversion goes through pygls's
:class:`~pygls.workspace.PositionCodec` and the text the positions refer to. For engine spans that text is
what the analysis read (``analysis.source(path)``), which is the open buffer when there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec


def lines_of(text: str | None) -> list[str]:
    """Split like pygls's documents do (line endings kept), so both sides agree on line numbers."""
    if not text:
        return []
    return text.splitlines(keepends=True)


def to_range(span, lines: Sequence[str], codec: PositionCodec) -> types.Range:
    """An engine Span → an LSP Range in the client's units."""
    start = codec.position_to_client_units(lines, types.Position(line=span.line, character=span.col))
    end = codec.position_to_client_units(lines, types.Position(line=span.end_line, character=span.end_col))
    return types.Range(start=start, end=end)


def from_position(position: types.Position, lines: Sequence[str], codec: PositionCodec) -> tuple[int, int]:
    """An LSP Position in the client's units → (line, code-point column) for engine queries."""
    # pygls clamps the position in place; give it a copy.
    copy = types.Position(line=position.line, character=position.character)
    server = codec.position_from_client_units(lines, copy)
    return server.line, server.character


def uri_of(path: str) -> str:
    return from_fs_path(str(path)) or Path(path).as_uri()


def path_of(uri: str) -> str | None:
    """Absolute file-system path of a ``file:`` URI; None for other schemes (untitled:, git:, …)."""
    if not uri.startswith("file:"):
        return None
    return to_fs_path(uri)


class SourceLines:
    """Lines of files by path, read once per analysis: the text the analysis used (its spans refer to it,
    even while a newer keystroke waits in the debounce), else the disk."""

    def __init__(self, analysis=None):
        self._analysis = analysis
        self._cache: dict[str, list[str]] = {}

    def __call__(self, path: str) -> list[str]:
        cached = self._cache.get(path)
        if cached is not None:
            return cached
        text = self._analysis.source(path) if self._analysis is not None else None
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
        lines = lines_of(text)
        self._cache[path] = lines
        return lines
