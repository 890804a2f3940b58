"""A preflight as a terminal reads it, and as one JSON object for tools.

Text says, per model, the verdict and, per problem, when it happens (the phase), the first worker line it
happens at (the others after it), and the fix; then the start-up refusals the launch checks found, and the
``check --fix`` that adds the missing members. Paths of engine lines are relative to the engine's root.
"""

from __future__ import annotations

import json
import shlex

from spec_contract.engine import Preflight, Problem, Verdict, VerdictState
from spec_contract.report import printable

_PHASES = {"start-up": "while the server starts, after the weights load", "first request": "at the first request",
           "every step": "every step"}

_HEADLINE = {
    VerdictState.CRASHES: "This launch will fail: it crashes.",
    VerdictState.REFUSED: "This launch will fail: the engine refuses it at start-up.",
    VerdictState.UNKNOWN: "Cannot tell whether this launch works.",
    VerdictState.DEGRADED: "This launch will run, on a degraded path.",
    VerdictState.SUPPORTED: "Nothing is known to fail in this launch.",
}


def phase_words(phase: str | None) -> str:
    return _PHASES.get(phase or "", f"({phase})" if phase else "")


def fix_command(verdict: Verdict) -> str | None:
    """The ``check --fix`` that adds the verdict's missing members to the class's file (inside the engine's
    tree, so ``check`` finds the engine's workers around it)."""
    return f"spec-contract check --fix {shlex.quote(verdict.path)}" if verdict.fixable else None


def _problem_lines(problem: Problem) -> list[str]:
    what = f"`{problem.member}`" if problem.member else "the algorithm"
    state = {VerdictState.CRASHES: "crashes", VerdictState.REFUSED: "refused at start-up",
             VerdictState.DEGRADED: "degraded", VerdictState.UNKNOWN: "cannot tell"}.get(problem.state, str(problem.state))
    lines = []
    if problem.uses:
        first = problem.uses[0]
        when = phase_words(first.phase) if problem.state is not VerdictState.REFUSED else ""
        lines.append(f"  {what} ({problem.code or 'gate'}): {state}{' ' + when if when else ''} at "
                     f"{first.path}:{first.line}")
        lines.append(f"      {first.text}")
        if len(problem.uses) > 1:
            lines.append("      also " + ", ".join(f"{u.path}:{u.line}" for u in problem.uses[1:]))
    else:
        lines.append(f"  {what} ({problem.code or 'gate'}): {state}")
    if problem.code == "" or not problem.fix or problem.state is VerdictState.REFUSED:
        lines.append(f"      {problem.message}")
    if problem.fix:
        lines.append(f"      fix: {problem.fix}")
    return [printable(line) for line in lines]


def render_text(result: Preflight) -> str:
    engine = result.engine
    version = f" {engine.version}" if engine.version else ""
    out = [f"{engine.profile or 'engine'}{version} ({engine.root}), algorithm {result.algorithm or 'none'}"]
    for verdict in result.verdicts:
        given = result.target if verdict.role.value == "target" else result.draft
        named = verdict.class_name if verdict.architecture == verdict.class_name else \
            f"{verdict.architecture} → {verdict.class_name}"
        out.append(f"{verdict.role.value}: {named} ({given.path if given else '?'}): {verdict.state}")
        for problem in verdict.problems:
            out += _problem_lines(problem)
        command = fix_command(verdict)
        if command:
            out.append(f"  fix all: {command}")
    for refusal in result.launch_problems:
        out.append(printable(f"launch: refused at start-up ({refusal.check}) at {refusal.where.path}:{refusal.where.line}"))
        out.append(printable(f"      {refusal.message}"))
        out.append(printable(f"      fix: {refusal.fix}"))
    for note in result.notes:
        out.append(printable(f"note: {note}"))
    out.append(_HEADLINE[result.state])
    return "\n".join(out)


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
        "engine": {"profile": result.engine.profile, "root": str(result.engine.root), "version": result.engine.version},
        "algorithm": result.algorithm, "state": str(result.state), "exit_code": result.exit_code,
        "target": result.target.path, "draft": result.draft.path if result.draft else None,
        "verdicts": [verdict_json(v) for v in result.verdicts],
        "launch_checks": [{"check": p.check, "state": "refused", "message": p.message, "path": p.where.path,
                           "line": p.where.line, "text": p.where.text, "fix": p.fix} for p in result.launch_problems],
        "notes": list(result.notes),
    }, indent=2)
