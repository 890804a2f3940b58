"""Human-readable output: ruff-style lines per finding (location, severity, code, message), then a summary
that counts each severity and says what was checked against what was analysed.

Every line that holds a file name or source text goes through :func:`~spec_contract.report.printable`: the
checked tree chose those, and a terminal must show them, not obey them.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Sequence

from spec_contract.engine import BY_CODE, Added, Finding, Role, Severity
from spec_contract.report import Report, printable

WIDTH = 200  # columns a finding's lines keep to (a terminal's own width when it is narrower): longer ones continue below
_PLURAL = {Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.INFORMATION: "information",
           Severity.HINT: "hints"}


def render(report: Report, statistics: bool = False, width: int = WIDTH) -> str:
    """Each finding (or, with ``statistics``, a count per code), then what the run found and checked."""
    findings = [f for f in report.findings if not report.is_baselined(f)  # the baseline's are not news
                and (report.hints or f.severity != Severity.HINT)]  # hints only when asked (``--hints``)
    if statistics:
        out = statistics_lines(findings)
    else:
        out = [line for f in findings for line in finding_lines(report, f, width=width)]
    skipped = sum(sum(a.stats.files_skipped.values()) for a in report.analyses)
    if report.baselined or report.stale:
        fixed = "".join("\n" + printable(f"    fixed: {e.class_qualname}.{e.member} ({e.code}, {e.role})")
                        for e in report.stale)  # the entries come from the baseline file: shown, not obeyed
        out.append(printable(f"Baseline: {len(report.findings) - len(findings)} finding(s) baselined, "
                             f"{len(report.stale)} baseline entr{'y' if len(report.stale) == 1 else 'ies'} "
                             "no longer found" + (" (fixed: write the baseline again to drop them)" if fixed else ""))
                   + fixed)
    if findings or report.checked()[0]:
        out.append(found(findings, "beyond the baseline" if report.baselined else ""))
    out.append(checked(report))
    unread = sum(len(a.unread) for a in report.analyses)
    if unread:
        out.append(f"Incomplete: {unread} path(s) the check needed could not be read.")
    if skipped:
        reasons = ", ".join(f"{n} {why}" for a in report.analyses for why, n in sorted(a.stats.files_skipped.items()))
        out.append(f"Skipped files: {reasons}.")
    return "\n".join(out)


def finding_lines(report: Report, finding: Finding, where: Callable[[str], str] | None = None,
                  width: int = WIDTH) -> list[str]:
    """One finding as a terminal shows it: ``path:line:col: severity CODE`` and the message's first clause,
    each further clause and note on a line of its own (``  = …``), every line at most ``width`` columns
    (a longer one continues, indented, on the next). Files are named as ``where`` names them (default: the
    text output's base, the working directory), inside the message too."""
    where = where or report.shown
    head, *rest = clauses(report.retold(finding.message, finding, where))
    location = f"{where(finding.path)}:{finding.span.line + 1}:{finding.span.col + 1}"
    lines = _wrapped(printable(f"{location}: {finding.severity} {finding.code} {head}"), "  ", width)
    for clause in rest:
        lines += _wrapped(printable(f"  = {clause}"), "    ", width)
    for note in finding.notes:
        lines += _wrapped(printable(f"  = note: {report.retold(note, finding, where)}"), "    ", width)
    return lines


def added_lines(report: Report, added: Sequence[Added], done: bool = True) -> list[str]:
    """What a fix adds (``done``) or would add, per class: the class, then each member with why (the code,
    severity and uses of the finding it answers)."""
    by_class: dict[str, list[Added]] = {}
    for one in added:
        by_class.setdefault(one.class_name, []).append(one)
    out = []
    for class_name, members in by_class.items():
        first = members[0].finding
        location = f"{report.shown(first.path)}:{first.span.line + 1}:{first.span.col + 1}"
        count = f"{len(members)} member{'s' if len(members) != 1 else ''}"
        out += _wrapped(printable(f"{location}: {'added' if done else 'would add'} {count} to `{class_name}`"), "  ")
        for one in members:
            out += _wrapped(printable(f"  + `{one.member}` forwarding to `self.{one.delegate}`: {_why(report, one)}"),
                            "    ")
    return out


def _why(report: Report, added: Added) -> str:
    """Why a member is added: the finding's severity and code, and where the workers use it."""
    finding = added.finding
    head, *uses = clauses(report.retold(finding.message, finding, report.shown))
    if added.member != finding.member:  # forwarded past a capability gate along with the gate's member
        return f"{finding.severity} {finding.code}, the {finding.algorithm or 'capability'} path uses it past the check"
    return f"{finding.severity} {finding.code}, " + ("; ".join(uses) if uses else head)


def statistics_lines(findings: list[Finding]) -> list[str]:
    """``--statistics``: how many findings of each code, most first, with the code's severity and name."""
    counts = Counter(f.code for f in findings)
    severity = {f.code: f.severity for f in findings}
    return [f"{n:>6}  {code}  {severity[code]:<11}  {BY_CODE[code].name}"
            for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def found(findings: list[Finding], qualifier: str = "") -> str:
    """The summary of the findings: how many of each severity, worst first."""
    beyond = f" {qualifier}" if qualifier else ""
    if not findings:
        return f"No findings{beyond}."
    counts = Counter(f.severity for f in findings)
    parts = ", ".join(f"{counts[s]} {_PLURAL[s] if counts[s] != 1 else s}" for s in Severity if counts[s])
    return f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}{beyond}: {parts}."


def checked(report: Report) -> str:
    """What the run vouches for against what it read: ``Checked 3 model classes in 1 file of 3242 analysed``."""
    classes, files, analysed = report.checked()
    if not classes:  # an all-clear would claim what nothing showed
        return f"No model class was checked ({analysed} files analysed, {report.seconds:.2f}s)."
    return (f"Checked {classes} model class{'es' if classes != 1 else ''} in {files} file{'s' if files != 1 else ''} "
            f"of {analysed} analysed ({report.seconds:.2f}s).")


def clauses(message: str) -> list[str]:
    """The message's clauses: split at ``; `` outside backticks (a quoted condition may hold one)."""
    out, start, quoted = [], 0, False
    for i, char in enumerate(message):
        if char == "`":
            quoted = not quoted
        elif not quoted and message.startswith("; ", i):
            out.append(message[start:i])
            start = i + 2
    out.append(message[start:])
    return [clause for clause in out if clause]


def _wrapped(line: str, indent: str, width: int = WIDTH) -> list[str]:
    """``line`` in lines of at most ``width`` columns, broken at spaces (a path or a name is never split)."""
    if len(line) <= width:
        return [line]
    return textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


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
