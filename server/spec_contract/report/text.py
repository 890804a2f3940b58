"""Human-readable output: one ruff-style line per finding, then a summary.

Every line that holds a file name or source text goes through :func:`~spec_contract.report.printable`: the
checked tree chose those, and a terminal must show them, not obey them.
"""

from __future__ import annotations

from spec_contract.engine import Role, Severity
from spec_contract.report import Report, printable


def render(report: Report) -> str:
    out = []
    findings = [f for f in report.findings if not report.is_baselined(f)]  # the baseline's are not news
    for f in findings:
        out.append(printable(f"{report.shown(f.path)}:{f.span.line + 1}:{f.span.col + 1}: {f.code} {f.message}"))
        for note in f.notes:
            out.append(printable(f"    note: {note}"))
    files = sum(a.stats.files_seen for a in report.analyses)
    errors = sum(1 for f in findings if f.severity == Severity.ERROR)
    others = len(findings) - errors
    skipped = sum(sum(a.stats.files_skipped.values()) for a in report.analyses)
    if report.baselined or report.stale:
        fixed = "".join("\n" + printable(f"    fixed: {e.class_qualname}.{e.member} ({e.code}, {e.role})")
                        for e in report.stale)  # the entries come from the baseline file: shown, not obeyed
        out.append(printable(f"Baseline: {len(report.findings) - len(findings)} finding(s) baselined, "
                             f"{len(report.stale)} baseline entr{'y' if len(report.stale) == 1 else 'ies'} "
                             "no longer found" + (" (fixed: write the baseline again to drop them)" if fixed else ""))
                   + fixed)
    if findings:
        out.append(f"Found {errors} error(s) and {others} other finding(s) in {files} files ({report.seconds:.2f}s).")
    else:
        done = "No findings beyond the baseline" if report.baselined else "All checked wrappers forward their contract"
        if not any(a.checked for a in report.analyses):
            done = "No model class was checked"  # an all-clear would claim what nothing showed
        out.append(f"{done} ({files} files, {report.seconds:.2f}s).")
    unread = sum(len(a.unread) for a in report.analyses)
    if unread:
        out.append(f"Incomplete: {unread} path(s) the check needed could not be read.")
    if skipped:
        reasons = ", ".join(f"{n} {why}" for a in report.analyses for why, n in sorted(a.stats.files_skipped.items()))
        out.append(f"Skipped files: {reasons}.")
    return "\n".join(out)


def render_contract(report: Report) -> str:
    out = []
    for analysis in report.analyses:
        for role in Role:
            entries = analysis.contract.for_role(role)
            out.append(f"{role} model ({len(entries)} members)")
            for entry in entries:
                kind = "required" if entry.required else "optional"
                out.append(f"  {entry.member}  [{kind}, {'call' if entry.is_call else 'attribute'}]")
                for site in entry.call_sites:
                    guard = "  (guarded)" if site.guarded else ""
                    out.append(printable(f"    {report.rel(site.path)}:{site.span.line + 1}  {site.text}{guard}"))
    for capability in report.capabilities():
        out.append(f"capability {capability.name}: Protocol {capability.protocol} (marker `{capability.marker}`; "
                   f"default methods {', '.join(capability.defaults) or 'none'})")
        out.append(f"  gated by {capability.check}() at:")
        out += [printable(f"    {report.rel(s.path)}:{s.span.line + 1}  {s.text}") for s in capability.gate_sites]
        out.append("  a target passes when")
        out += [f"    - {need}" for need in capability.requires]
        if capability.reads:
            out.append("  read without a guard by the proposers at:")
            out += [printable(f"    {report.rel(s.path)}:{s.span.line + 1}  {s.text}") for s in capability.reads]
    return "\n".join(out)
