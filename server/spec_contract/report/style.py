"""Colour for the text report, when a person reads it on a terminal.

Whether to colour follows the conventions other linters (ruff, ESLint) and https://no-color.org share: an
explicit ``--color always|never`` wins; else ``FORCE_COLOR`` (any value but empty or ``0``) turns colour on,
for a CI log viewer that shows it; else ``NO_COLOR`` (any non-empty value) turns it off; else colour when
standard output is a terminal that is not ``TERM=dumb``. A file, a pipe or an editor's log never gets escape
sequences unless asked.

Colour is added after a line is wrapped and after :func:`~spec_contract.report.printable` has escaped what
the checked tree chose, so the only escape sequences in the output are the ones added here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

from spec_contract.engine import Severity

_RESET = "\x1b[0m"
# The severity words: red errors and yellow warnings as rustc, ruff and ESLint draw them; cyan information and
# green hints (rustc's "help").
_SEVERITY = {Severity.ERROR: "1;31", Severity.WARNING: "1;33", Severity.INFORMATION: "1;36", Severity.HINT: "1;32"}
_BOLD = "1"
_MARK = "1;34"  # the ``=`` before a finding's further clauses, as rustc draws its notes


def wants_colour(choice: str, stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """``--color``'s ``choice`` (``auto``, ``always``, ``never``) for ``stream``, with the environment's say."""
    if choice != "auto":
        return choice == "always"
    if environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    if environ.get("NO_COLOR", ""):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and environ.get("TERM") != "dumb"


class Style:
    """Paints the parts of the report's lines; ``Style(False)`` leaves every text as it is."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def _paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}{_RESET}" if self.on and text else text

    def bold(self, text: str) -> str:
        return self._paint(text, _BOLD)

    def severity(self, text: str, severity: Severity) -> str:
        return self._paint(text, _SEVERITY[severity])

    def mark(self, text: str) -> str:
        return self._paint(text, _MARK)


PLAIN = Style(False)
