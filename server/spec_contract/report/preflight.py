"""A preflight as a terminal reads it, and as one JSON object for tools.

Text says, per model, the verdict and, per problem (in the order a run meets them), when it happens (the
phase), the first worker line it happens at (the others after it), and the fix; then the start-up refusals
the launch checks found, and the ``check --fix`` that adds the missing members; then, when the launch fails
more than one way, every failure in the order a run meets them; last, which one the user meets first. Paths
of engine lines are relative to the engine's root.
"""

from __future__ import annotations

import json
import shlex
from itertools import groupby

from spec_contract.engine import PHASES, Failure, Preflight, Problem, Verdict, VerdictState, phase_words
from spec_contract.report import printable

_HEADLINE = {
    VerdictState.UNKNOWN: "Cannot tell whether this launch works.",
    VerdictState.DEGRADED: "This launch will run, on a degraded path.",
    VerdictState.SUPPORTED: "Nothing is known to fail in this launch.",
}


def fix_command(verdict: Verdict) -> str | None:
    """The ``check --fix`` that adds the verdict's missing members to the class's file (inside the engine's
    tree, so ``check`` finds the engine's workers around it)."""
    return f"spec-contract check --fix {shlex.quote(verdict.path)}" if verdict.fixable else None


def _phase_rank(problem: Problem) -> int:
    phase = problem.uses[0].phase if problem.uses else None
    return PHASES.index(phase) if phase in PHASES else len(PHASES)


def _problem_lines(problem: Problem) -> list[str]:
    what = f"`{problem.member}`" if problem.member else "the algorithm"
    state = {VerdictState.UNKNOWN: "cannot tell"}.get(problem.state, str(problem.state))
    said_by = problem.code or ("config" if problem.state is VerdictState.NOT_ITS_DRAFT else "gate")
    lines = []
    if problem.uses:
        first = problem.uses[0]
        when = phase_words(first.phase) if problem.state in (VerdictState.CRASHES, VerdictState.REFUSED) else ""
        lines.append(f"  {what} ({said_by}): {state}{' ' + when if when else ''} at "
                     f"{first.path}:{first.line}")
        lines.append(f"      {first.text}")
        if len(problem.uses) > 1:
            lines.append("      also " + ", ".join(f"{u.path}:{u.line}" for u in problem.uses[1:]))
    else:
        lines.append(f"  {what} ({said_by}): {state}")
    if problem.code == "" or not problem.fix or problem.state is VerdictState.REFUSED:
        lines.append(f"      {problem.message}")
    if problem.fix:
        lines.append(f"      fix: {problem.fix}")
    return [printable(line) for line in lines]


def _failure_words(failures: list[Failure], algorithm: str | None) -> str:
    """What fails, for failures of one kind (the launch refused, or one model refused or crashing)."""
    first = failures[0]
    names = " or ".join(f"`{f.what}`" if f.who != "launch" else f.what for f in failures)
    if first.who == "launch":
        return f"the engine refuses the launch ({names})"
    if first.state is VerdictState.REFUSED:
        return f"the engine refuses {algorithm} for the {first.who} ({names})"
    return f"the {first.who} crashes on {names}"


def _first_failure(result: Preflight) -> str:
    """Which failure the user meets first (a tie: those the engine's start-up order does not tell apart)."""
    firsts = result.first_failures
    kinds = [list(group) for _, group in groupby(firsts, key=lambda f: (f.who, f.state))]
    what = "; or ".join(_failure_words(kind, result.algorithm) for kind in kinds)
    tie = " (whichever the run reaches first)" if len(firsts) > 1 else ""
    return f"This launch will fail: first, {firsts[0].when}, {what}{tie}."


def render_text(result: Preflight) -> str:
    engine = result.engine
    version = f" {result.version}" if result.version else ""
    out = [printable(f"{engine.profile or 'engine'}{version} ({engine.root}), algorithm {result.algorithm or 'none'}")]
    for verdict in result.verdicts:
        given = result.target if verdict.role.value == "target" else result.draft
        out.append(printable(f"{verdict.role.value}: {_named(verdict)} ({given.path if given else '?'}): "
                             f"{verdict.state}"))
        out += _verdict_lines(verdict)
    if result.instead:
        out.append(f"the draft the engine loads instead: {_instead_words(result)}")
        for verdict in result.instead:
            out.append(printable(f"  {_named(verdict)}: {verdict.state}"))
            out += ["  " + line for line in _verdict_lines(verdict)]
    for refusal in result.launch_problems:
        out.append(printable(f"launch: refused {refusal.when} ({refusal.check}) at {refusal.where.path}:"
                             f"{refusal.where.line}"))
        out.append(printable(f"      {refusal.message}"))
        out.append(printable(f"      fix: {refusal.fix}"))
    for note in result.notes:
        out.append(printable(f"note: {note}"))
    failures = result.failures
    if len(failures) > 1:
        out.append("In the order a run meets them:")
        for number, failure in enumerate(failures, 1):
            where = f" at {failure.path}:{failure.line}" if failure.path else ""
            out.append(printable(f"  {number}. {failure.when}: {_failure_words([failure], result.algorithm)}{where}"))
    out.append(_first_failure(result) if failures else _HEADLINE.get(result.state, "This launch will fail."))
    return "\n".join(out)


def _named(verdict: Verdict) -> str:
    return verdict.class_name if verdict.architecture == verdict.class_name else \
        f"{verdict.architecture} → {verdict.class_name}"


def _verdict_lines(verdict: Verdict) -> list[str]:
    """The verdict's problems, in the order a run meets them, and the ``check --fix`` that adds what it lacks."""
    out = [line for problem in sorted(verdict.problems, key=_phase_rank) for line in _problem_lines(problem)]
    command = fix_command(verdict)
    return out + [printable(f"  fix all: {command}")] if command else out


def _instead_words(result: Preflight) -> str:
    """What the classes the engine loads instead of the draft say of the launch (see ``instead_state``)."""
    state = result.instead_state
    failing = sum(v.state in (VerdictState.CRASHES, VerdictState.REFUSED) for v in result.instead)
    if not failing:
        return "none of them fails" if state in (None, VerdictState.SUPPORTED) else f"none fails; the worst: {state}"
    if failing < len(result.instead):
        return "which one depends on the checkpoint, and some of them fail"
    return "every one of them fails"


def _problem_json(problem: Problem) -> dict[str, object]:
    return {"state": str(problem.state), "code": problem.code, "member": problem.member, "message": problem.message,
            "fix": problem.fix,
            "uses": [{"path": u.path, "line": u.line, "text": u.text, "phase": u.phase} for u in problem.uses]}


def verdict_json(verdict: Verdict) -> dict[str, object]:
    return {"role": str(verdict.role), "architecture": verdict.architecture, "class": verdict.class_name,
            "qualname": verdict.qualname, "path": verdict.path, "line": verdict.line,
            "algorithm": verdict.algorithm, "state": str(verdict.state),
            "problems": [_problem_json(p) for p in verdict.problems], "notes": list(verdict.notes),
            "fix_command": fix_command(verdict)}


def render_json(result: Preflight) -> str:
    return json.dumps({
        "version": 1,
        "engine": {"profile": result.engine.profile, "root": str(result.engine.root), "version": result.version},
        "algorithm": result.algorithm, "state": str(result.state), "exit_code": result.exit_code,
        "target": result.target.path, "draft": result.draft.path if result.draft else None,
        "verdicts": [verdict_json(v) for v in result.verdicts],
        # a draft the algorithm never loads: the classes its config loads instead, each as the draft
        "instead": [verdict_json(v) for v in result.instead],
        "launch_checks": [{"check": p.check, "state": "refused", "message": p.message, "path": p.where.path,
                           "line": p.where.line, "text": p.where.text, "fix": p.fix, "when": p.when}
                          for p in result.launch_problems],
        "notes": list(result.notes),
        # every refusal and crash in the order a run meets them: the first is the one the user meets first
        "failures": [{"phase": f.phase, "when": f.when, "who": f.who, "state": str(f.state), "what": f.what,
                      "path": f.path or None, "line": f.line or None, "first": f in result.first_failures}
                     for f in result.failures],
    }, indent=2)
