"""The support matrix: every architecture the engine registers × every algorithm of its profile (and
``EAGLE``, the uses every speculative run shares: what a plain EAGLE, NEXTN or MTP launch meets).

Each cell is the verdict a preflight of that architecture under that algorithm gives (a class in the role it
plays: draft heads as drafts, every other class as the target), so a cell, a preflight and ``check`` read
the same findings and class status. A draft-role member a non-draft class lacks (SC005) crashes only if a
draft checkpoint names the class: it is a note of the row, not a cell.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec_contract.engine.check.status import BASE_ALGORITHM
from spec_contract.engine.launch.algorithms import select
from spec_contract.engine.launch.architectures import architectures
from spec_contract.engine.launch.verdict import ClassFacts, Verdict, class_facts, verdict
from spec_contract.engine.queries import Analysis
from spec_contract.engine.resolve.index import ClassKey
from spec_contract.engine.results import Finding, Role


@dataclass(frozen=True)
class Row:
    architecture: str
    class_name: str
    qualname: str
    path: str  # relative to the engine's root
    line: int
    role: Role
    cells: tuple[Verdict, ...]  # in the matrix's algorithm order
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Matrix:
    engine: str  # the profile's engine package
    root: str
    algorithms: tuple[str, ...]
    rows: tuple[Row, ...]


def role_of(analysis: Analysis, name: str) -> Role:
    """The role a class plays in the matrix: a draft when it can only be one, else the target."""
    return Role.DRAFT if analysis.config.roles_for_class(name) == (Role.DRAFT,) else Role.TARGET


def support_matrix(analysis: Analysis) -> Matrix:
    # the uses every speculative run shares first (plain EAGLE, NEXTN, MTP launches), then the profile's algorithms
    names = (BASE_ALGORITHM, *(a.name for a in analysis.config.algorithms if a.name != BASE_ALGORITHM))
    engine = analysis.config.engine_package
    selections = [select(analysis.config, engine, name) for name in names]
    by_class: dict[str, list[Finding]] = {}
    for finding in analysis.findings:  # each finding under every class it concerns (see verdict.concerns)
        for qualname in dict.fromkeys((finding.class_qualname, *(c.class_qualname for c in finding.classes))):
            by_class.setdefault(qualname, []).append(finding)
    facts: dict[ClassKey, ClassFacts] = {}
    rows = []
    for arch, key in architectures(analysis).items():
        if key not in facts:
            facts[key] = class_facts(analysis, key, tuple(by_class.get(key.dotted, ())))
        name = key.qualname.rsplit(".", 1)[-1]
        role = role_of(analysis, name)
        cells = tuple(verdict(analysis, arch, facts[key], role, s) for s in selections)
        draft_gaps = sorted({f.member for f in facts[key].findings if f.code == "SC005"})
        notes = (f"if a draft checkpoint names it, the draft role lacks {', '.join(draft_gaps)}",) if draft_gaps else ()
        path = analysis.index.path_of(key.module) or ""
        rows.append(Row(arch, name, key.dotted, analysis.relative(path), cells[0].line if cells else 1, role, cells,
                        notes))
    return Matrix(engine, str(analysis.root), names, tuple(rows))
