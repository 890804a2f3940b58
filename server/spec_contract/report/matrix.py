"""The support matrix as a terminal table, a Markdown table and one JSON object (the HTML page is
:mod:`~spec_contract.report.matrix_html`).

Every format shows the same cells: one state per architecture and algorithm, and (JSON, the page's
tooltips) the reason and the fix behind it. Each starts with its title (the engine and its tree), which is also
how ``matrix -o FILE`` knows a file it may replace (:func:`written_by_matrix`).
"""

from __future__ import annotations

import json

from spec_contract.engine import Matrix, Verdict, VerdictState
from spec_contract.report import printable

TITLE = "spec-contract support matrix"
_JSON_OPENING = '{\n  "tool": "spec-contract matrix"'


def title(matrix: Matrix) -> str:
    """The engine: each format's first words."""
    return f"{TITLE}: {matrix.engine}"


def written_by_matrix(head: bytes) -> bool:
    """Whether a file's first bytes are of a matrix this command wrote (each format starts with its title; a
    page also in its ``<title>``, as pages written before the title led every format did)."""
    text = head.decode("utf-8", "replace").removeprefix("\ufeff")
    return text.startswith((f"{TITLE}: ", f"# {TITLE}: ", _JSON_OPENING)) or \
        text.startswith("<!DOCTYPE html>") and f"<title>{TITLE}: " in text


def cell_reason(cell: Verdict) -> tuple[str, str]:
    """(why, fix) of a cell, one line each: the first problem's member, line and message; its fix."""
    if not cell.problems:
        return ("", "")
    first = cell.problems[0]
    where = f" at {first.uses[0].path}:{first.uses[0].line}" if first.uses else ""
    members = [p.member for p in cell.problems if p.member and p.state is first.state]
    what = f"{', '.join(f'`{m}`' for m in members)}: " if members else ""
    detail = first.code if members and first.code else first.message
    why = f"{cell.state}: {what}{detail}{where}"
    fixes = [p.fix for p in cell.problems if p.fix]
    return (why, "; ".join(dict.fromkeys(fixes)))


def _counts(matrix: Matrix) -> str:
    counts: dict[str, int] = {}
    for row in matrix.rows:
        for cell in row.cells:
            counts[str(cell.state)] = counts.get(str(cell.state), 0) + 1
    return ", ".join(f"{counts[str(s)]} {s}" for s in VerdictState if str(s) in counts)


def render_table(matrix: Matrix) -> str:
    header = ["architecture", "role", *matrix.algorithms]
    rows = [[printable(r.architecture), str(r.role), *(str(c.state) for c in r.cells)] for r in matrix.rows]
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(word.ljust(w) for word, w in zip(line, widths)).rstrip() for line in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append(f"{len(matrix.rows)} architectures × {len(matrix.algorithms)} algorithms: {_counts(matrix)}")
    return "\n".join([f"{title(matrix)} ({printable(matrix.root)})", "", *lines])


def _md(text: str) -> str:
    return printable(text).replace("|", "\\|")


def render_markdown(matrix: Matrix) -> str:
    lines = [f"# {_md(title(matrix))}", "", f"`{_md(matrix.root)}`", "",
             f"| architecture | class | role | {' | '.join(matrix.algorithms)} |",
             "|---|---|---|" + "---|" * len(matrix.algorithms)]
    for row in matrix.rows:
        cells = []
        for cell in row.cells:
            why, _ = cell_reason(cell)
            cells.append(str(cell.state) if not why else f"{cell.state} ({_md(why.split(': ', 1)[-1])})")
        lines.append(f"| {_md(row.architecture)} | `{_md(row.class_name)}` | {row.role} | {' | '.join(cells)} |")
    lines += ["", f"{len(matrix.rows)} architectures × {len(matrix.algorithms)} algorithms: {_counts(matrix)}"]
    return "\n".join(lines)


def matrix_data(matrix: Matrix) -> dict[str, object]:
    rows = []
    for row in matrix.rows:
        cells = {}
        for cell in row.cells:
            why, fix = cell_reason(cell)
            cells[cell.algorithm] = {
                "state": str(cell.state), "why": why, "fix": fix,
                "members": sorted({p.member for p in cell.problems if p.member}),
                "codes": sorted({p.code for p in cell.problems if p.code}),
                "notes": list(cell.notes),
            }
        rows.append({"architecture": row.architecture, "class": row.class_name, "qualname": row.qualname,
                     "path": row.path, "line": row.line, "role": str(row.role), "cells": cells,
                     "notes": list(row.notes)})
    return {"tool": "spec-contract matrix", "version": 1, "title": title(matrix), "engine": matrix.engine, "root": matrix.root, "algorithms": list(matrix.algorithms),
            "states": [str(s) for s in VerdictState], "rows": rows}


def render_json(matrix: Matrix) -> str:
    return json.dumps(matrix_data(matrix), indent=2)
