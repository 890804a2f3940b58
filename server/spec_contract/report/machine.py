"""Machine-readable formats: the fixed JSON schema, SARIF 2.1.0 and GitHub Actions annotations."""

from __future__ import annotations

from collections.abc import Callable

from spec_contract import __version__
from spec_contract.engine import RULES, Severity, fingerprint
from spec_contract.report import Report, printable, worst_first
from spec_contract.report.indented_json import dumps

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note", Severity.HINT: "note"}


def _contract(report: Report) -> list[dict]:
    return [{"role": e.role, "method": e.member, "required": e.required,
             "call_sites": [report.site(s) for s in e.call_sites]}
            for a in report.analyses for e in a.contract.entries]


def _semantics(finding, report: Report) -> dict:
    """The additive fields of the contract semantics, present when they say something: the algorithm a
    capability finding (SC003) loses and the members its fix forwards past the gate, the rare condition of an
    SC004."""
    out: dict = {}
    if finding.algorithm:
        out["algorithm"] = finding.algorithm
    if finding.condition:
        out["condition"] = finding.condition
    if finding.also:
        out["also"] = [{"method": f.member, "delegate": f.delegate, "inner_class": f.inner_class}
                       for f in finding.also]
    if finding.implements or finding.unfit:  # SC010/SC012: how the fix provides each member (like which class,
        # where; "cannot tell" with the part a fix must edit too, and why no model fits)
        out["implements"] = _implements(finding.implements + finding.unfit, report)
    if finding.classes:  # SC011: each class that crashes at the worker line
        out["classes"] = [{"path": report.rel(c.path), "class": c.class_name, "qualname": c.class_qualname,
                           "members": list(c.members), "implements": _implements(c.implements, report)}
                          for c in finding.classes]
    return out


def _implements(implements: tuple, report: Report) -> list[dict]:
    return [{"method": member, "how": str(p.how), "like": p.like, "in_class": p.in_class,
             "in_path": report.rel(p.path) if p.path else None, "delegate": p.delegate,
             **({"why": p.why} if p.why else {}), **_capture(p, report)} for member, p in implements]


def _capture(p, report: Report) -> dict:
    """The decoder an EAGLE-3 implementation edits too (its forward made to capture aux hidden states), so a
    CI tool sees every class the fix changes, not only the one the finding is on."""
    if p.capture is None:
        return {}
    c = p.capture
    return {"capture": {"decoder": c.decoder, "decoder_path": report.rel(c.decoder_path), "like": c.like or None,
                        "delegate": c.delegate}}


def render_json(report: Report) -> str:
    findings = [{
        "code": f.code, "severity": f.severity, "path": report.rel(f.path),
        "line": f.span.line + 1, "column": f.span.col + 1, "end_line": f.span.end_line + 1,
        "end_column": f.span.end_col + 1, "class": f.class_name, "method": f.member, "role": f.role,
        "roles": list(f.roles), "delegate": f.delegate, "inner_class": f.inner_class,
        "call_sites": [report.site(s) for s in f.call_sites], "message": f.message, "notes": list(f.notes),
        "fingerprint": fingerprint(f), "baselined": report.is_baselined(f),
        **_semantics(f, report),
    } for f in report.findings]
    stats = {
        "files_seen": sum(a.stats.files_seen for a in report.analyses),
        "files_parsed": sum(a.stats.files_parsed for a in report.analyses),
        "files_from_cache": sum(a.stats.files_from_cache for a in report.analyses),
        "files_skipped": {k: v for a in report.analyses for k, v in a.stats.files_skipped.items()},
        "seconds": round(report.seconds, 3),
        "notes": [note for a in report.analyses for note in a.notes],  # the run's own warnings (see Analysis)
    }
    out = {"version": 1, "root": str(report.analyses[0].root) if report.analyses else None, "findings": findings,
           "contract": _contract(report), **_capabilities(report), "stats": stats}
    if report.baselined or report.stale:
        out["baseline"] = {"baselined": len(report.baselined), "stale": [
            {"code": e.code, "class": e.class_qualname, "member": e.member, "role": e.role, "path": e.path}
            for e in report.stale]}
    return dumps(out)


def _capabilities(report: Report) -> dict:
    """The contract's Protocol capabilities, present when the profile has any (vLLM's; SGLang's has none)."""
    capabilities = [{
        "name": c.name, "protocol": c.protocol, "check": c.check, "marker": c.marker, "defaults": list(c.defaults),
        "requires": list(c.requires), "gate_sites": [report.site(s) for s in c.gate_sites],
        "reads": [report.site(s) for s in c.reads],
    } for c in report.capabilities()]
    return {"capabilities": capabilities} if capabilities else {}


def render_json_contract(report: Report) -> str:
    return dumps({"version": 1, "contract": _contract(report), **_capabilities(report)})


def render_sarif(report: Report) -> str:
    results = []
    for f in report.findings:
        results.append({
            "ruleId": f.code, "level": _SARIF_LEVEL[f.severity], "message": {"text": f.message},
            "partialFingerprints": {"specContract/v1": fingerprint(f)},
            **({"baselineState": "unchanged" if report.is_baselined(f) else "new"} if report.baselined else {}),
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": report.rel(f.path)},
                "region": {"startLine": f.span.line + 1, "startColumn": f.span.col + 1,
                           "endLine": f.span.end_line + 1, "endColumn": f.span.end_col + 1}}}],
            "relatedLocations": [{"id": i, "message": {"text": f"{s.role} model uses {s.member}"},
                                  "physicalLocation": {"artifactLocation": {"uri": report.rel(s.path)},
                                                       "region": {"startLine": s.span.line + 1}}}
                                 for i, s in enumerate(f.call_sites)],
        })
    rules = [{"id": rule.code, "name": rule.name, "shortDescription": {"text": rule.summary},
              "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]}} for rule in RULES]
    return dumps({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "spec-contract", "version": __version__, "rules": rules}},
                  "invocations": [_invocation(report)], "results": results}],
    })


def _workflow_data(text: str) -> str:
    """``text`` as the message of a workflow command: one line whatever it holds (GitHub's runner reads a
    command to the end of the line and unescapes ``%25``, ``%0D``, ``%0A``), with terminal controls shown
    rather than sent to the log viewer (which renders ANSI sequences)."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _workflow_property(text: str) -> str:
    """``text`` as a property value (``file=…``): also ``:`` (which ends the properties) and ``,`` (which
    separates them) are escaped, so a file name cannot add a property or start the message."""
    return _workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def _invocation(report: Report) -> dict:
    """The SARIF record of the run: whether it could read everything it needed, and its warnings."""
    return {"executionSuccessful": not any(a.unread for a in report.analyses),
            "toolExecutionNotifications": [{"level": "warning", "message": {"text": note}}
                                           for a in report.analyses for note in a.notes]}


ANNOTATED_ERRORS = 10  # GitHub shows at most 10 error annotations per step (and 10 warnings, 10 notices)
_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice",
                 Severity.HINT: "notice"}


def render_github(report: Report, where: Callable[[str], str], summarised: bool = False) -> str:
    """``::error file=…,line=…::message`` workflow commands that GitHub shows on the pull request: the
    error findings (what fails the run), as many as GitHub shows for a step, and a notice counting the rest
    (``summarised``: they are in the job's summary).

    ``where`` names files relative to the repository root, which is where GitHub looks for them. File names
    come from the checked tree: ``evil\\n::warning file=x::injected.py`` must stay one property of one
    command, hence the escaping (properties and message differ, as GitHub's runner reads them).
    """
    findings = [f for f in report.findings if not report.is_baselined(f)]
    errors = [f for f in findings if f.severity == Severity.ERROR]
    out = []
    for f in errors[:ANNOTATED_ERRORS]:
        out.append(f"::error file={_workflow_property(where(f.path))},line={f.span.line + 1},"
                   f"col={f.span.col + 1},endColumn={f.span.end_col + 1},title={_workflow_property(f.code)}"
                   f"::{_workflow_data(report.retold(f.message, f, where))}")
    more, below = len(errors) - ANNOTATED_ERRORS, len(findings) - len(errors)
    what = [f"{more} more error finding{'s' if more != 1 else ''} (GitHub shows {ANNOTATED_ERRORS} error annotations "
            "per step)"] if more > 0 else []
    what += [f"{below} finding{'s' if below != 1 else ''} below error level"] if below else []
    if what:
        listed = f"the job's summary lists all {len(findings)}" if summarised else "`spec-contract check` lists them"
        out.append(f"::notice title=spec-contract::{_workflow_data(' and '.join(what))} not annotated; {listed}")
    out += [f"::warning title=spec-contract::{_workflow_data(note)}" for a in report.analyses for note in a.notes]
    return "\n".join(out)


def github_summary(report: Report, where: Callable[[str], str]) -> str:
    """A Markdown table of every finding, worst first, for the job's summary page (``$GITHUB_STEP_SUMMARY``)."""
    from spec_contract.report.text import checked, found

    findings = worst_first((f for f in report.findings if not report.is_baselined(f)), where)
    out = ["## spec-contract", "", f"{found(findings)} {checked(report)}", ""]
    if findings:
        out += ["| Severity | Code | Location | Finding |", "| --- | --- | --- | --- |"]
        out += [f"| {f.severity} | {f.code} | {_cell(f'{where(f.path)}:{f.span.line + 1}')} | "
                f"{_cell(report.retold(f.message, f, where))} |" for f in findings]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell: on one line (``printable`` escapes line breaks), its ``|`` kept in the
    cell, HTML shown as text."""
    text = printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|")
