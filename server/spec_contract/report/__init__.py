"""Turning an analysis into what a terminal, a CI system or another tool reads.

Every format takes the same :class:`Report` (one or more analysed roots) and returns a string; the CLI only
picks one and prints it. Machine formats give paths relative to the root of the project that holds them,
text output relative to the working directory; lines and columns are 1-based.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from spec_contract.engine import Severity, fingerprint, relative_to

if TYPE_CHECKING:  # names in annotations only: a warm check loads none of the analysis (see ``engine.pipeline``)
    from spec_contract.engine import Analysis, BaselineEntry, CallSite, Finding, GatedCapability


@dataclass(frozen=True)
class Report:
    analyses: tuple[Analysis, ...]
    seconds: float
    # Text output names files relative to the working directory, as ruff prints them (None: as ``rel``).
    cwd: Path | None = None
    baselined: frozenset[str] = frozenset()  # fingerprints (engine.baseline) of findings the baseline covers
    stale: tuple[BaselineEntry, ...] = ()  # baseline entries no finding matched any more
    hints: bool = False  # text output shows hint findings only when asked (``--hints``); JSON always has them
    # rel() of each path asked so far: a report names ~180 files ~1,400 times (SGLang's JSON)
    _relative: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)
    _shown: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)  # shown(), as rel()

    @property
    def findings(self) -> list[Finding]:
        return [f for a in self.analyses for f in a.findings]

    def rel(self, path: str) -> str:
        """Relative to the root of the project that holds ``path`` (the first project's otherwise)."""
        known = self._relative.get(path)
        if known is None:
            known = self._relative[path] = self._rel(path)
        return known

    def _rel(self, path: str) -> str:
        for analysis in self.analyses[1:]:
            if path.startswith(str(analysis.root) + os.sep):
                return analysis.relative(path)
        return self.analyses[0].relative(path) if self.analyses else path

    def shown(self, path: str) -> str:
        """How text output names a file: relative to the working directory (see :func:`from_cwd`)."""
        if self.cwd is None:
            return self.rel(path)
        known = self._shown.get(path)
        if known is None:
            known = self._shown[path] = from_cwd(path, self.cwd, [a.root for a in self.analyses])
        return known

    def retold(self, text: str, finding: Finding, where: Callable[[str], str]) -> str:
        """``text`` (the finding's message or a note) with every file it names as ``where`` names them.

        The engine words a message once, naming worker files relative to their project (the JSON keeps
        that); a report that names the finding's own file otherwise (relative to the working directory, to
        the repository) names the files inside its messages the same way: one path base in every line.
        """
        for path in {site.path for site in finding.call_sites} | {finding.provider.path, finding.path}:
            old, new = self.rel(path), where(path)
            if old != new and old in text:
                text = re.sub(rf"(?<![\w./-]){re.escape(old)}(?=:\d)", new.replace("\\", "\\\\"), text)
        return text

    def checked(self) -> tuple[int, int, int]:
        """(model classes checked, the files they are in, files analysed): what the run vouches for, and what
        it read to do so."""
        classes = [(a, key) for a in self.analyses for key in a.checked]
        files = {a.index.path_of(key.module) for a, key in classes}
        return len(classes), len(files - {None}), sum(a.stats.files_seen for a in self.analyses)

    def is_baselined(self, finding: Finding) -> bool:
        return bool(self.baselined) and fingerprint(finding) in self.baselined

    def capabilities(self) -> list[CapabilityView]:
        """The contract's Protocol capabilities (vLLM's ``SupportsEagle3``): what a class must be for the workers'
        ``supports_*()`` gate to let it through, and what the Protocol's default methods then require of it."""
        return [_view(gated) for analysis in self.analyses for gated in analysis.capabilities]

    def site(self, site: CallSite) -> dict[str, object]:
        out = {"path": self.rel(site.path), "line": site.span.line + 1, "guarded": site.guarded,
               "phase": str(site.phase)}  # when a run reaches it: start-up (after loading), first request, or every step (guarded)
        if site.algorithm:  # the contract-semantics fields, present only when they say something
            out["algorithm"] = site.algorithm
        if site.algorithms is not None and len(site.algorithms) > 1:  # the algorithms whose runs reach it, when
            out["algorithms"] = sorted(site.algorithms)  # "algorithm" does not name the one (absent: every run)
        if site.gate:
            out["gate"] = list(site.gate)
        if site.alternative_of:
            out["alternative_of"] = list(site.alternative_of)
        if site.condition:
            out["condition"] = site.condition
        return out


def from_cwd(path: str, cwd: Path, roots: Iterable[Path]) -> str:
    """``path`` as text output names it, from where the user stands (``cwd``), as ruff does: below ``cwd``,
    relative to it (``models/llava.py``); elsewhere in a project whose root holds ``cwd``, relative too, up
    and down (``../speculative/eagle_worker.py`` from ``srt/models``); anywhere else, absolute."""
    inside = relative_to(path, cwd)
    if inside != path:
        return inside
    for root in roots:
        if path.startswith(str(root) + os.sep) and cwd.is_relative_to(root):
            return os.path.relpath(path, cwd).replace(os.sep, "/")
    return path


SEVERITY_RANK = {severity: i for i, severity in enumerate(Severity)}  # errors 0, then warnings, information, hints


def worst_first(findings: Iterable[Finding], where: Callable[[str], str]) -> list[Finding]:
    """Errors first, then warnings, information and hints; within each by file (as ``where`` names it), line,
    column and code: what fails a run is what a reader meets first."""
    return sorted(findings, key=lambda f: (SEVERITY_RANK[f.severity], where(f.path), f.span.line, f.span.col, f.code))


@dataclass(frozen=True)
class CapabilityView:
    """One Protocol capability of the contract, as the reports show it."""

    name: str  # the algorithm it enables
    protocol: str  # dotted
    check: str  # the function the workers gate with
    marker: str
    defaults: tuple[str, ...]  # the Protocol's default methods
    requires: tuple[str, ...]  # what a target needs to pass the gate and survive the defaults, one sentence each
    gate_sites: tuple[CallSite, ...]
    reads: tuple[CallSite, ...]  # unguarded reads of the language model's holder by the proposers


def _view(gated: GatedCapability) -> CapabilityView:
    cap = gated.capability
    delegate = (f"the object the defaults delegate to (`{cap.language_method}()` when the class has it, else "
                f"`self.{cap.language_attr}`, else the class itself), or its `.{cap.holder_attr}` when it has one")
    requires = [f"it declares `{cap.protocol.rpartition('.')[2]}` through its bases, or sets `{cap.marker}` and "
                "has every member the Protocol names"]
    if cap.holder_mixin:
        asserted = f" (`{cap.holder_method}` asserts it)" if cap.holder_method else ""
        requires.append(f"{delegate}, is an `{cap.holder_mixin.rpartition('.')[2]}`{asserted}")
    requires.append("each `forward` from the class to that holder returns the aux hidden states with the hidden "
                    "states (the model runner unpacks the pair)")
    if gated.reads:
        requires.append(f"the language model the proposers take has a `.{cap.holder_attr}`")
    return CapabilityView(cap.name, cap.protocol, cap.check, cap.marker, gated.defaults, tuple(requires),
                          gated.sites, gated.reads)


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
