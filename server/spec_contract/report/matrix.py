"""The support matrix as a terminal table, a Markdown table and one JSON object (the HTML page is
:mod:`~spec_contract.report.matrix_html`).

Every format shows the same cells, in the same row order (the engine's: targets, then drafts, by name): one
state per architecture and algorithm, the reason behind it (when it happens, what fails, where) and the fix;
what each state means, in words; and the architectures left out because their class plays no role in a
speculative run. Each starts with its title (the engine, its release and its tree), which is also how
``matrix -o FILE`` knows a file it may replace (:func:`written_by_matrix`).
"""

from __future__ import annotations

import json

from spec_contract.engine import Matrix, Verdict, VerdictState, phase_words
from spec_contract.report import printable

TITLE = "spec-contract support matrix"
_JSON_OPENING = '{\n  "tool": "spec-contract matrix"'

# each state in words, and when it happens (what a run of the algorithm with this class meets)
STATE_WORDS = {
    VerdictState.CRASHES: "a run reaches a worker line that uses a member the class lacks and dies with "
                          "AttributeError: while the server starts, after the weights load, or at the first "
                          "request (the reason says which, and where)",
    VerdictState.REFUSED: "the engine's own check refuses the algorithm for the class, and says why, while the "
                          "server starts, after the weights load (the reason names the check's line)",
    VerdictState.UNKNOWN: "whether it works depends on the language model the checkpoint's config names at run "
                          "time",
    VerdictState.DEGRADED: "runs, on the worker's guarded fallback path at every step: a member the class could "
                           "forward to its inner model is missing",
    VerdictState.SUPPORTED: "nothing a run of the algorithm uses is missing",
    VerdictState.NOT_ITS_DRAFT: "a draft the engine never loads for the algorithm: its config loads the "
                                "algorithm's own draft architectures instead (the reason names them, and where)",
}


def title(matrix: Matrix) -> str:
    """The engine and its release (when the tree says it): each format's first words."""
    return f"{TITLE}: {matrix.engine}{f' {matrix.version}' if matrix.version else ''}"


def written_by_matrix(head: bytes) -> bool:
    """Whether a file's first bytes are of a matrix this command wrote (each format starts with its title; a
    page also in its ``<title>``, as pages written before the title led every format did)."""
    text = head.decode("utf-8", "replace").removeprefix("\ufeff")
    return text.startswith((f"{TITLE}: ", f"# {TITLE}: ", _JSON_OPENING)) or \
        text.startswith("<!DOCTYPE html>") and f"<title>{TITLE}: " in text


def cell_reason(cell: Verdict) -> tuple[str, str]:
    """(why, fix) of a cell, one line each: its state and, for a failure, when it happens and what fails where
    (the members a run lacks, or the problem's own words; a refusal names the cell's own algorithm); its fix."""
    if not cell.problems:
        return ("", "")
    first = cell.problems[0]
    same = [p for p in cell.problems if p.state is first.state]
    if first.state is VerdictState.CRASHES and all(p.how for p in same) and first.uses:
        use = first.uses[0]
        codes = ", ".join(dict.fromkeys(p.code for p in same if p.code))
        members = ", ".join(f"`{p.member}`" for p in same)
        why = f"crashes {phase_words(use.phase)}: the {cell.role} lacks {members}{f' ({codes})' if codes else ''}; " \
              f"a run dies first at {use.path}:{use.line}"
    else:
        why = f"{cell.state}: {first.message}"
    fixes = [p.fix for p in cell.problems if p.fix]
    return (why, "; ".join(dict.fromkeys(fixes)))


def _counts(matrix: Matrix) -> str:
    counts: dict[str, int] = {}
    for row in matrix.rows:
        for cell in row.cells:
            counts[str(cell.state)] = counts.get(str(cell.state), 0) + 1
    return ", ".join(f"{counts[str(s)]} {s}" for s in VerdictState if str(s) in counts)


def _summary(matrix: Matrix) -> list[str]:
    """The closing lines every text format shares: the counts, what was left out, and the states in words."""
    lines = [f"{len(matrix.rows)} architectures × {len(matrix.algorithms)} algorithms: {_counts(matrix)}"]
    if matrix.left_out:
        lines.append(f"left out: {len(matrix.left_out)} architectures whose class never generates (embedding, "
                     f"classification, reward models: the engine's generation test, the profile's non-target-classes), "
                     f"so no run makes it its target or its draft: {', '.join(printable(a) for a in matrix.left_out)}")
    return lines


def render_table(matrix: Matrix) -> str:
    header = ["architecture", "role", *matrix.algorithms]
    rows = [[printable(r.architecture), str(r.role), *(str(c.state) for c in r.cells)] for r in matrix.rows]
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(word.ljust(w) for word, w in zip(line, widths)).rstrip() for line in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    width = max(len(str(s)) for s in VerdictState)
    legend = [f"  {str(s).ljust(width)}  {words}" for s, words in STATE_WORDS.items()]
    return "\n".join([f"{title(matrix)} ({printable(matrix.root)})", "", *lines, *_summary(matrix), "states:",
                      *legend])


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
            cells.append(_md(why) if why else str(cell.state))
        lines.append(f"| {_md(row.architecture)} | `{_md(row.class_name)}` | {row.role} | {' | '.join(cells)} |")
    lines += ["", *(_md(line) for line in _summary(matrix)), ""]
    lines += [f"- **{s}**: {words}" for s, words in STATE_WORDS.items()]
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
    return {"tool": "spec-contract matrix", "version": 1, "title": title(matrix), "engine": matrix.engine,
            "engine_version": matrix.version, "root": matrix.root, "algorithms": list(matrix.algorithms),
            "states": [str(s) for s in VerdictState], "legend": {str(s): w for s, w in STATE_WORDS.items()},
            "left_out": list(matrix.left_out), "rows": rows}


def render_json(matrix: Matrix) -> str:
    return json.dumps(matrix_data(matrix), indent=2)
