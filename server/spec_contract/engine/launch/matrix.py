"""The support matrix: every architecture the engine registers whose class can play a role in a speculative
run × every algorithm of its profile (and ``EAGLE``, the uses every speculative run shares: what a plain EAGLE,
NEXTN or MTP launch meets).

Each cell is the verdict a preflight of that architecture under that algorithm gives (a class in the role it
plays, the status model's :func:`~spec_contract.engine.check.status.serving_roles`: draft heads as drafts,
every other generative class as the target), so a cell, a preflight and ``check`` read the same findings and
class status. A class the engine never serves as a generative model (embedding, classification, reward models:
its generation test and the profile's ``non-target-classes``) plays no role: it has no row, and the matrix
says which architectures it left out. A draft-role member a non-draft class lacks (SC005) crashes only if a
draft checkpoint names the class: it is a note of the row, not a cell.

Rows come targets first, then drafts, each by architecture name (case aside), so that every format lists them
in one stable order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spec_contract.engine.check.status import serving_roles
from spec_contract.engine.launch.algorithms import select
from spec_contract.engine.launch.architectures import architectures
from spec_contract.engine.launch.release import release
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
    version: str | None = None  # the engine's release, read from the tree (None: it does not say)
    left_out: tuple[str, ...] = ()  # the architectures whose class plays no role (it never generates)


def role_of(analysis: Analysis, facts: ClassFacts) -> Role | None:
    """The role a class plays in the matrix: the first its status serves (a draft when it can only be one, else
    the target); None when it can play none."""
    name = facts.key.qualname.rsplit(".", 1)[-1]
    serves = facts.status.serves if facts.status is not None else serving_roles(analysis.config, name)
    return serves[0] if serves else None


def support_matrix(analysis: Analysis) -> Matrix:
    # the uses every speculative run shares first (plain EAGLE, NEXTN, MTP launches), then the profile's algorithms
    # the release's algorithms that use the model at all (NGRAM, a suffix decoder: nothing of the contract)
    served = {name for entry in analysis.contract.entries for site in entry.call_sites
              for name in (site.algorithms or analysis.contract.algorithms)}
    names = tuple(name for name in analysis.contract.algorithms if name in served)
    engine = analysis.config.engine_package
    selections = [select(analysis.contract, analysis.config.profile, name) for name in names]
    by_class: dict[str, list[Finding]] = {}
    for finding in analysis.findings:  # each finding under every class it concerns (see verdict.concerns)
        for qualname in dict.fromkeys((finding.class_qualname, *(c.class_qualname for c in finding.classes))):
            by_class.setdefault(qualname, []).append(finding)
    facts: dict[ClassKey, ClassFacts] = {}
    rows, left_out = [], []
    for arch, key in architectures(analysis).items():
        if key not in facts:
            facts[key] = class_facts(analysis, key, tuple(by_class.get(key.dotted, ())))
        role = role_of(analysis, facts[key])
        if role is None:
            left_out.append(arch)
            continue
        name = key.qualname.rsplit(".", 1)[-1]
        cells = tuple(verdict(analysis, arch, facts[key], role, s) for s in selections)
        draft_gaps = sorted({f.member for f in facts[key].findings if f.code == "SC005"})
        notes = (f"if a draft checkpoint names it, the draft role lacks {', '.join(draft_gaps)}",) if draft_gaps else ()
        path = analysis.index.path_of(key.module) or ""
        rows.append(Row(arch, name, key.dotted, analysis.relative(path), cells[0].line if cells else 1, role, cells,
                        notes))
    rows.sort(key=lambda row: (row.role is not Role.TARGET, row.architecture.casefold(), row.architecture))
    return Matrix(engine, str(analysis.root), names, tuple(rows), release(Path(analysis.root), engine),
                  tuple(left_out))
