"""Engine positions (0-based lines, code-point columns) ↔ LSP positions in the negotiated encoding.

The client picks the column unit at ``initialize`` (Neovim 0.11 chooses utf-8, VS Code utf-16, Emacs
utf-32), so a column is never simply a ``str`` index: every conversion goes through pygls's
:class:`~pygls.workspace.PositionCodec` and the text the positions refer to. For engine spans that text is
what the analysis read (``analysis.source(path)``), which is the open buffer when there is one.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec, TextDocument, Workspace

from spec_contract.engine import lines_with_ends

if TYPE_CHECKING:
    from spec_contract.engine import Analysis, Span


def lines_of(text: str | None) -> list[str]:
    """The lines (endings kept) as the parser counts them, as the engine's spans and the server's documents
    (:class:`ParserLinesDocument`) do."""
    if not text:
        return []
    return lines_with_ends(text)


class ParserLinesDocument(TextDocument):
    """An open buffer whose lines break where Python's do.

    pygls splits a document with ``str.splitlines``, which also breaks at form feeds, ``\x0b``, ``\x1c``-
    ``\x1e``, ``\x85`` and U+2028/U+2029; an incremental edit below such a character would land one line
    early in the server's copy, and every position the engine computes would be off by one.
    """

    @property
    def lines(self) -> Sequence[str]:
        return tuple(lines_with_ends(self.source))


class ParserLinesWorkspace(Workspace):
    """pygls's workspace, making :class:`ParserLinesDocument` documents.

    pygls builds its :class:`Workspace` itself while handling ``initialize``, just before the server's own
    handler runs (and before any document can be opened); :meth:`recast` turns that instance into this class,
    which adds behaviour and no state.
    """

    @classmethod
    def recast(cls, workspace: Workspace) -> None:
        workspace.__class__ = cls

    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None) -> TextDocument:
        return ParserLinesDocument(
            doc_uri, source=source, version=version, language_id=language_id,
            sync_kind=self._sync_kind, position_codec=self.position_codec,
        )


def to_range(span: Span, lines: Sequence[str], codec: PositionCodec) -> types.Range:
    """An engine Span → an LSP Range in the client's units."""
    return types.Range(start=_client_position(lines, span.line, span.col, codec),
                       end=_client_position(lines, span.end_line, span.end_col, codec))


def _client_position(lines: Sequence[str], line: int, col: int, codec: PositionCodec) -> types.Position:
    """``codec.position_to_client_units`` of (line, code-point column), answered at once where the line's text
    before the column is ASCII: one unit per character in utf-8, utf-16 and utf-32 alike. pygls counts a
    prefix's units with a Python call per character; a keystroke that moves the methods other classes' findings
    point at re-renders a hundred files' diagnostics, and counting was most of that (13 ms of 37)."""
    try:
        prefix = lines[line][:col]
    except IndexError:  # past the last line: what pygls answers there
        return types.Position(line=len(lines), character=0)
    if prefix.isascii():
        return types.Position(line=line, character=len(prefix))
    return codec.position_to_client_units(lines, types.Position(line=line, character=col))


def from_position(position: types.Position, lines: Sequence[str], codec: PositionCodec) -> tuple[int, int]:
    """An LSP Position in the client's units → (line, code-point column) for engine queries."""
    # pygls clamps the position in place; give it a copy.
    copy = types.Position(line=position.line, character=position.character)
    server = codec.position_from_client_units(lines, copy)
    return server.line, server.character


@functools.lru_cache(maxsize=8192)
def uri_of(path: str) -> str:
    """The ``file:`` URI of a path (memoised: every report names its file's and its call sites' URIs)."""
    return from_fs_path(str(path)) or Path(path).as_uri()


def path_of(uri: str) -> str | None:
    """Absolute file-system path of a ``file:`` URI; None for other schemes (untitled:, git:, …)."""
    if not uri.startswith("file:"):
        return None
    return to_fs_path(uri)


class SourceLines:
    """Lines of files by path, read once per analysis: the text the analysis used (its spans refer to it,
    even while a newer keystroke waits in the debounce), else the disk."""

    def __init__(self, analysis: Analysis | None = None) -> None:
        self._analysis = analysis
        self._cache: dict[str, list[str]] = {}

    def __call__(self, path: str) -> list[str]:
        cached = self._cache.get(path)
        if cached is not None:
            return cached
        text = self._analysis.source(path) if self._analysis is not None else None
        if text is None:
            from spec_contract.engine import decode, read_bytes

            text = decode(read_bytes(path)).text or ""  # as the engine reads it: its cookie, no BOM
        lines = lines_of(text)
        self._cache[path] = lines
        return lines
