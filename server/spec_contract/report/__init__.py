"""Turning an analysis into what a terminal, a CI system or another tool reads.

Every format takes the same :class:`Report` (one or more analysed roots) and returns a string; the CLI only
picks one and prints it. Paths are relative to the first checked root, lines and columns 1-based.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from spec_contract.engine.queries import Analysis
from spec_contract.engine.results import CallSite, Finding


@dataclass(frozen=True)
class Report:
    analyses: tuple[Analysis, ...]
    seconds: float

    @property
    def findings(self) -> list[Finding]:
        return [f for a in self.analyses for f in a.findings]

    def rel(self, path: str) -> str:
        return self.analyses[0].relative(path) if self.analyses else path

    def site(self, site: CallSite) -> dict:
        return {"path": self.rel(site.path), "line": site.span.line + 1, "guarded": site.guarded}


# Characters a terminal or log viewer acts on instead of showing: C0/C1 controls (ESC starts a sequence that
# can retitle the window, move the cursor or hide text), format characters (bidirectional overrides that
# reorder what is shown), line and paragraph separators, and lone surrogates (a file name that is not UTF-8,
# which ``print`` cannot even encode).
_HIDDEN = ("Cc", "Cf", "Cs", "Zl", "Zp")


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on shown as a Python escape (``\\x1b``).

    File names and source text come from the checked tree, which its author chose: a name holding an escape
    sequence must not reach the reader's terminal as one.
    """
    if text.isprintable():  # the common case, in C
        return text
    return "".join(_escape(c) if unicodedata.category(c) in _HIDDEN else c for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
