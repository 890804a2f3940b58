"""What a request on one document is answered from, taken once when the request starts.

A handler gets a :class:`RequestContext` from :meth:`spec_contract.lsp.session.Session.context` and reads
everything from it: the folder and the analysis that covers the document (the first pass's, or a whole
analysis including every edit made so far), the text the analysis read (its spans refer to that text), the
client's position encoding and its features. Newer keystrokes change the session, never the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace import PositionCodec

from spec_contract.lsp.convert import SourceLines, from_position, lines_of
from spec_contract.lsp.features import ClientFeatures
from spec_contract.lsp.workspace import Folder

if TYPE_CHECKING:
    from spec_contract.engine import Analysis


@dataclass(frozen=True)
class RequestContext:
    """A request's folder, analysis and document, with what converting positions needs."""

    uri: str
    path: str
    folder: Folder
    analysis: Analysis  # covering ``path``
    codec: PositionCodec
    features: ClientFeatures
    lines: SourceLines = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lines", SourceLines(self.analysis))

    def engine_position(self, position: types.Position) -> tuple[int, int]:
        """An LSP position in this document → the (line, code-point column) engine queries take."""
        return from_position(position, lines_of(self.analysis.source(self.path)), self.codec)
