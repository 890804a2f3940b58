"""The suppression comment, ``# spec-contract: ignore[CODE, …]`` (a bare ``ignore`` for every code): read by
the scanner for a class (:mod:`~spec_contract.engine.summarise.classes`) and written by the quick fix
(:mod:`~spec_contract.engine.edits.stubs`) with one grammar, so that what the fix writes is what the check reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

EVERY_CODE = "*"  # what a bare ``ignore`` suppresses
# A code list holds codes, commas and spaces only: ``ignore[SC-1]`` is a bare ignore followed by other text
COMMENT = re.compile(r"#\s*spec-contract:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s]*)\])?")


def suppressed_codes(match: re.Match[str]) -> list[str]:
    """The codes a found comment names, or ``[EVERY_CODE]`` for a bare ``ignore`` (or an empty list)."""
    listed = [c.strip() for c in (match.group("codes") or "").split(",") if c.strip()]
    return listed or [EVERY_CODE]


def comment(codes: Sequence[str] | None) -> str:
    """The comment that suppresses ``codes`` (every code when None or empty)."""
    return "# spec-contract: ignore" + (f"[{', '.join(codes)}]" if codes else "")


def extended(match: re.Match[str], code: str | None) -> str:
    """The comment ``match`` found with ``code`` added (every code when None; a bare ``ignore`` already
    covers every code and stays as written)."""
    if match.group("codes") is None:
        return match.group(0)
    if code is None:
        return comment(None)
    codes = [c.strip() for c in match.group("codes").split(",") if c.strip()]
    if code not in codes:
        codes.append(code)
    return comment(codes)
