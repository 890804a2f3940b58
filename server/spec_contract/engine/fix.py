"""Findings → text edits: forwarding stubs and suppression comments for wrapper classes.

The libcst stub generator (:mod:`spec_contract.engine.stubs`) is imported only when an edit is asked for,
so neither the CLI's plain check nor the language server's start-up pays for libcst.
"""

from __future__ import annotations

from collections.abc import Iterable

from spec_contract.engine.queries import Analysis
from spec_contract.engine.results import Finding, TextEdit

_KIND = {"method": "method", "async_method": "async_method", "property": "property"}


def delegation_edits(analysis: Analysis, findings: Iterable[Finding]) -> list[TextEdit]:
    """One insertion per wrapper class, forwarding every member its findings name."""
    from spec_contract.engine.stubs import Delegation, delegation_edit

    by_class: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        by_class.setdefault((finding.path, finding.class_name), []).append(finding)
    edits = []
    for (path, class_name), group in sorted(by_class.items()):
        source = analysis.source(path)
        if source is None:
            continue
        delegations = [
            Delegation(member=f.member, delegate=f.delegate, kind=_KIND.get(f.provider.kind, "attribute"),
                       inner_source=analysis.source(f.provider.path), inner_line=f.provider.span.line)
            for f in group
        ]
        edit = delegation_edit(path, source, class_name, delegations)
        if edit is not None:
            edits.append(edit)
    return edits


def suppression_edit(analysis: Analysis, finding: Finding) -> TextEdit | None:
    """``# spec-contract: ignore[CODE]`` above the finding's class."""
    from spec_contract.engine.stubs import suppression_edit as edit

    source = analysis.source(finding.path)
    return None if source is None else edit(finding.path, source, finding.class_name, finding.code)


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with non-overlapping edits applied (last first, so earlier positions stay valid)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return offsets[min(line, len(lines))] + col if line < len(lines) else len(text)

    for edit in sorted(edits, key=lambda e: (e.span.line, e.span.col), reverse=True):
        start, end = offset(edit.span.line, edit.span.col), offset(edit.span.end_line, edit.span.end_col)
        text = text[:start] + edit.new_text + text[end:]
    return text
