"""Turning an analysis into what a terminal, a CI system or another tool reads.

Every format takes the same :class:`Report` (one or more analysed roots) and returns a string; the CLI only
picks one and prints it. Paths are relative to the first checked root, lines and columns 1-based.
"""

from __future__ import annotations

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
