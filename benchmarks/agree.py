"""Whether check, hover, the matrix and preflight say the same about every class of a tree (issue 37).

    python benchmarks/agree.py TREE [--profile sglang|vllm] [--limit N]

For every row of the support matrix (an architecture's class in the role it plays) and every algorithm, it
asks each front end what a run of that algorithm with that class meets, through the functions the front ends
themselves call on one analysis of the tree:

- the matrix: the cell's state and the members its problems name;
- check of the class's file alone (``check path/to/model.py``): the members its findings say the class fails
  with (:func:`~spec_contract.engine.in_files`, as the CLI's PATH filter and the editor's diagnostics of the
  file), against those the row's problems that name a finding say, in any algorithm (a finding is not asked per
  algorithm; a clean refusal of a class that does not claim the algorithm is nothing for check to report);
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


def _check(analysis: Analysis, row) -> tuple[set[str], set[str]]:
    """The members ``check FILE`` of the row's file reports the class fails with (a crash, or a refusal it can
    fix), and those it names past a check the class fails, which the fix provides too (``also``)."""
    path = str(Path(analysis.root) / row.path)
    found = [f for f in in_files(analysis.findings, lambda p: p == path)
             if f.class_qualname == row.qualname and row.role in f.roles and f.code in FAILING]
    return {f.member for f in found}, {also.member for f in found for also in f.also}


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
            role = re.match(r"crashes as the (\w+)", words)
            out[match["algorithm"]] = ("refused" if words.startswith("not supported") else
                                       "crashes" if words.startswith("crashes")
                                       and (role is None or role[1] == str(row.role)) else
                                       "unknown" if words.startswith("cannot") else
                                       "not-its-draft" if words.startswith("never its draft") else "runs")
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
    return "fails" if state in FAILED else "never loaded" if state == "not-its-draft" else "runs"


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

    def report(front: str, text: str) -> None:
        disagree[front] += 1
        if not args.limit or disagree[front] <= args.limit:
            print(f"{front} vs matrix: {text}")

    with tempfile.TemporaryDirectory() as scratch:
        for row in matrix.rows:
            where = f"{row.class_name} ({row.role}, {row.path}:{row.line})"
            hover = _hover(analysis, row)
            # check is not asked per algorithm (a finding names the runs it concerns in words): the members the
            # class fails with, in any run, are what the matrix's problems that name a finding say; a clean
            # refusal of a class that does not claim the algorithm names none, and check rightly says nothing
            said_members = {p.member for cell in row.cells for p in cell.problems
                            if str(p.state) in FAILED and p.member and p.code}
            lacking, past = _check(analysis, row)
            # every member check says fails is one the matrix says, and every one the matrix says, check names
            # (as a finding of its own, or past the check whose finding it is)
            if not lacking <= said_members or not said_members <= lacking | past:
                report("check", f"{where}: matrix {sorted(said_members)}, check {sorted(lacking)}"
                                f"{f' and past a check {sorted(past - lacking)}' if past - lacking else ''}")
            for algorithm, cell in zip(matrix.algorithms, row.cells):
                cells += 1
                said = str(cell.state)
                answers = {"hover": _said(hover.get(algorithm, "runs")),
                           "preflight": _said(_preflight(analysis, engine, config.profile, row, algorithm,
                                                         Path(scratch)))}
                for front, answer in answers.items():
                    if answer != _said(said):
                        report(front, f"{where} {algorithm}: matrix {said}, {front} {answer}")
    print(f"{len(matrix.rows)} classes × {len(matrix.algorithms)} algorithms = {cells} cells: check disagrees with "
          f"the matrix on {disagree['check']} classes, hover on {disagree['hover']} cells, preflight on "
          f"{disagree['preflight']} cells")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
