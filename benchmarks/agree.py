"""Whether check, hover, the matrix and preflight say the same about every class of a tree (issue 37).

    python benchmarks/agree.py TREE [--profile sglang|vllm] [--limit N]

For every row of the support matrix (an architecture's class in the role it plays) and every algorithm, it
asks each front end what a run of that algorithm with that class meets, through the functions the front ends
themselves call on one analysis of the tree:

- the matrix: the cell's state and the members its problems name;
- check of the class's file alone (``check path/to/model.py``): the findings it reports for that class
  (:func:`~spec_contract.engine.in_files`, as the CLI's PATH filter and the editor's diagnostics of the file),
  compared with the cell's problems that name a finding (a clean refusal of a class that does not claim the
  algorithm is nothing for check to report);
- hover over the class name: the state its line for the algorithm says;
- preflight of a launch whose checkpoint names the architecture (a ``config.json`` written to a scratch
  folder), the class as target, or as draft beside it: the verdict's state.

It prints each disagreement (the class, the algorithm, what each front end says) and a count per pair, and
exits 1 when there is one. Nothing is timed; it is a script because it reads a whole release.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from lsprotocol import types
from pygls.workspace import PositionCodec
from spec_contract.engine import (
    Analysis,
    Launch,
    Project,
    Role,
    in_files,
    load_config,
    support_matrix,
)
from spec_contract.engine.launch.preflight import Engine, preflight
from spec_contract.lsp.hover import Places, hover_for

# the codes whose finding says a run fails (crashes, or the engine refuses it); the others say it runs,
# degraded or under a condition, or that a declaration is missing
FAILING = frozenset({"SC001", "SC003", "SC005", "SC006", "SC007", "SC009", "SC010", "SC011", "SC012", "SC013"})
FAILED = ("crashes", "refused")
_HOVER_LINE = re.compile(r"^- (?P<algorithm>[A-Z0-9_]+): (?P<words>.*)$")


def _about(finding, algorithm: str) -> bool:
    """Whether a run of ``algorithm`` meets the finding: the algorithm it names, or a use such a run reaches."""
    return finding.algorithm == algorithm or any(site.serves(algorithm) for site in finding.call_sites)


def _check(analysis: Analysis, row, algorithm: str) -> tuple[str, set[str]]:
    """What ``check FILE`` of the row's file says of the class in a run of ``algorithm``."""
    path = str(Path(analysis.root) / row.path)
    found = [f for f in in_files(analysis.findings, lambda p: p == path)
             if f.class_qualname == row.qualname and row.role in f.roles and f.code in FAILING
             and _about(f, algorithm)]
    return ("fails" if found else "runs"), {f.member for f in found}


def _hover(analysis: Analysis, row) -> dict[str, str]:
    """The state hover over the class's name gives each algorithm (its words' first)."""
    path = str(Path(analysis.root) / row.path)
    text = analysis.source(path) or ""
    lines = text.splitlines(keepends=True)
    line = lines[row.line - 1] if row.line - 1 < len(lines) else ""
    col = max(line.find(row.class_name), 0)
    hover = hover_for(analysis, path, row.line - 1, col, Places(str, links=False), lambda _: lines,
                      PositionCodec(types.PositionEncodingKind.Utf32), False)
    value = hover.contents.value if hover is not None else ""
    out = {}
    for text_line in value.splitlines():
        match = _HOVER_LINE.match(text_line)
        if match:
            words = match["words"]
            out[match["algorithm"]] = ("refused" if words.startswith("not supported") else
                                       "crashes" if words.startswith("crashes") else
                                       "unknown" if words.startswith("cannot") else "runs")
    return out


def _preflight(analysis: Analysis, engine: Engine, profile: str, row, algorithm: str, scratch: Path) -> str:
    checkpoint = scratch / re.sub(r"\W", "_", row.architecture)
    checkpoint.mkdir(exist_ok=True)
    (checkpoint / "config.json").write_text(json.dumps({"architectures": [row.architecture]}), encoding="utf-8")
    draft = str(checkpoint) if row.role is Role.DRAFT else None
    result = preflight(Launch(profile, str(checkpoint), algorithm, draft), engine, analysis, {})
    verdict = next((v for v in result.verdicts if v.role is row.role), None)
    return str(verdict.state) if verdict is not None else "none"


def _said(state: str) -> str:
    return "fails" if state in FAILED else "runs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--profile", default=None)
    parser.add_argument("--limit", type=int, default=0, help="print at most N disagreements of each kind")
    args = parser.parse_args()
    root = args.tree.resolve()
    config = load_config(root, None, {"profile": args.profile} if args.profile else None)
    analysis = Project(root, config).analyze()
    matrix = support_matrix(analysis)
    engine = Engine(config.profile, root)
    disagree: Counter[str] = Counter()
    cells = 0
    with tempfile.TemporaryDirectory() as scratch:
        for row in matrix.rows:
            hover = _hover(analysis, row)
            for algorithm, cell in zip(matrix.algorithms, row.cells):
                cells += 1
                said = str(cell.state)
                failing = [p for p in cell.problems if str(p.state) in FAILED]
                # check reports what the class can change: a cell whose problem names no finding (a clean refusal
                # of a class that does not claim the algorithm) is one check rightly says nothing of
                members = {p.member for p in failing if p.member and p.code}
                reported = "fails" if any(p.code for p in failing) else "runs"
                check, lacking = _check(analysis, row, algorithm)
                answers = {"check": check, "hover": _said(hover.get(algorithm, "runs")),
                           "preflight": _said(_preflight(analysis, engine, config.profile, row, algorithm,
                                                         Path(scratch)))}
                for front, answer in answers.items():
                    wrong = (answer != reported or not members <= lacking) if front == "check" \
                        else answer != _said(said)
                    if wrong:
                        disagree[front] += 1
                        if not args.limit or disagree[front] <= args.limit:
                            print(f"{front} vs matrix: {row.class_name} ({row.role}, {row.path}:{row.line}) "
                                  f"{algorithm}: matrix {said} {sorted(members)}, {front} {answer}"
                                  f"{f' {sorted(lacking)}' if front == 'check' else ''}")
    print(f"{len(matrix.rows)} classes × {len(matrix.algorithms)} algorithms = {cells} cells: " +
          ", ".join(f"{front} disagrees with the matrix on {disagree[front]}"
                    for front in ("check", "hover", "preflight")))
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
