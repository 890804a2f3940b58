"""Human-readable output: ruff-style lines per finding (location, severity, code, message), errors first, then
a summary that counts each severity, what was left out and how to see it, and what was checked against what
was analysed. A finding's first line says what fails and where; its further clauses go on ``  = …`` lines.

Every line that holds a file name or source text goes through :func:`~spec_contract.report.printable`: the
checked tree chose those, and a terminal must show them, not obey them.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Sequence

from spec_contract.engine import BY_CODE, Added, Finding, Role, Severity
from spec_contract.report import SEVERITY_RANK, Report, printable, worst_first
from spec_contract.report.style import PLAIN, Style

WIDTH = 200  # columns a finding's lines keep to (a terminal's own width when it is narrower): longer ones continue below
_PLURAL = {Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.INFORMATION: "information",
           Severity.HINT: "hints"}


def render(report: Report, statistics: bool = False, width: int = WIDTH, quiet: bool = False,
           style: Style = PLAIN) -> str:
    """Each finding, worst first (or, with ``statistics``, a count per code), then what the run found and
    checked. ``quiet`` shows the errors alone (ESLint's ``--quiet``); the summary counts what was not shown
    and says how to see it."""
    news = [f for f in report.findings if not report.is_baselined(f)]  # the baseline's are not news
    findings = worst_first([f for f in news if _shown(report, f, quiet)], report.shown)
    hidden = Counter(f.severity for f in news if not _shown(report, f, quiet))
    if statistics:
        out = statistics_lines(findings, style)
    else:
        out = [line for f in findings for line in finding_lines(report, f, width=width, style=style)]
    skipped = sum(sum(a.stats.files_skipped.values()) for a in report.analyses)
    if report.baselined or report.stale:
        fixed = "".join("\n" + printable(f"    fixed: {e.class_qualname}.{e.member} ({e.code}, {e.role})")
                        for e in report.stale)  # the entries come from the baseline file: shown, not obeyed
        out.append(printable(f"Baseline: {len(report.findings) - len(news)} finding(s) baselined, "
                             f"{len(report.stale)} baseline entr{'y' if len(report.stale) == 1 else 'ies'} "
                             "no longer found" + (" (fixed: write the baseline again to drop them)" if fixed else ""))
                   + fixed)
    if news or report.checked()[0]:
        out.append(found(findings, "beyond the baseline" if report.baselined else "",
                         _not_shown(hidden, quiet, report.hints), style))
    out.append(checked(report))
    unread = sum(len(a.unread) for a in report.analyses)
    if unread:
        out.append(f"Incomplete: {unread} path(s) the check needed could not be read.")
    if skipped:
        reasons = ", ".join(f"{n} {why}" for a in report.analyses for why, n in sorted(a.stats.files_skipped.items()))
        out.append(f"Skipped files: {reasons}.")
    return "\n".join(out)


def _shown(report: Report, finding: Finding, quiet: bool) -> bool:
    """Whether the text output lists ``finding``: errors alone when ``quiet``, hints only when asked."""
    if quiet:
        return finding.severity == Severity.ERROR
    return report.hints or finding.severity != Severity.HINT


def _not_shown(hidden: Counter[Severity], quiet: bool, hints: bool) -> str:
    """What the summary says of the findings left out: how many of each severity, and the flags that show them
    (``119 hints not shown (add --hints to see them)``); empty when none were."""
    if not hidden:
        return ""
    how = (["drop --quiet"] if quiet else []) + (["add --hints"] if hidden[Severity.HINT] and not hints else [])
    return f"{_counts(hidden)} not shown ({' and '.join(how)} to see them)"


def finding_lines(report: Report, finding: Finding, where: Callable[[str], str] | None = None,
                  width: int = WIDTH, style: Style = PLAIN) -> list[str]:
    """One finding as a terminal shows it: ``path:line:col: severity CODE`` and the message's first clause,
    each further clause and note on a line of its own (``  = …``), every line at most ``width`` columns
    (a longer one continues, indented, on the next). Files are named as ``where`` names them (default: the
    text output's base, the working directory), inside the message too. ``style`` colours the location, the
    severity and code, and each ``=``, once the lines are cut (escape sequences take no columns)."""
    where = where or report.shown
    head, *rest = clauses(report.retold(finding.message, finding, where))
    location = printable(f"{where(finding.path)}:{finding.span.line + 1}:{finding.span.col + 1}")
    label = f"{location}: {finding.severity} {finding.code}"
    first, *lines = _wrapped(f"{label} {printable(head)}", "  ", width)
    if first.startswith(label):
        first = (f"{style.bold(location)}: {style.severity(str(finding.severity), finding.severity)} "
                 f"{style.bold(finding.code)}{first[len(label):]}")
    lines.insert(0, first)
    for text in rest + [f"note: {report.retold(note, finding, where)}" for note in finding.notes]:
        mark, *more = _wrapped(printable(f"  = {text}"), "    ", width)
        lines += [f"  {style.mark('=')}{mark[3:]}", *more]
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
            how = f"implemented like `{one.like.rsplit('.', 1)[-1]}`" if one.like else \
                f"forwarding to `self.{one.delegate}`"
            out += _wrapped(printable(f"  + `{one.member}` {how}: {_why(report, one)}"), "    ")
    return out


def _why(report: Report, added: Added) -> str:
    """Why a member is added: the finding's severity and code, and where the workers use it."""
    finding = added.finding
    head, *uses = clauses(report.retold(finding.message, finding, report.shown))
    if added.member != finding.member:  # forwarded past a capability gate along with the gate's member
        return f"{finding.severity} {finding.code}, the {finding.algorithm or 'capability'} path uses it past the check"
    return f"{finding.severity} {finding.code}, " + ("; ".join(uses) if uses else head)


def statistics_lines(findings: list[Finding], style: Style = PLAIN) -> list[str]:
    """``--statistics``: how many findings of each code with the code's severity and name, worst severity
    first (errors on top, as the findings are listed), most first within one."""
    counts = Counter(f.code for f in findings)
    severity = {f.code: f.severity for f in findings}
    ordered = sorted(counts.items(), key=lambda item: (SEVERITY_RANK[severity[item[0]]], -item[1], item[0]))
    return [f"{n:>6}  {code}  {style.severity(f'{severity[code]:<11}', severity[code])}  {BY_CODE[code].name}"
            for code, n in ordered]


def found(findings: list[Finding], qualifier: str = "", hidden: str = "", style: Style = PLAIN) -> str:
    """The summary of the findings: how many of each severity, worst first, and ``hidden``, what was left out."""
    beyond = f" {qualifier}" if qualifier else ""
    rest = f"; {hidden}." if hidden else "."
    if not findings:
        return f"No findings{' to show' if hidden else ''}{beyond}{rest}"
    counts = Counter(f.severity for f in findings)
    return (f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}{beyond}: "
            f"{_counts(counts, style)}{rest}")


def _counts(counts: Counter[Severity], style: Style = PLAIN) -> str:
    """``3 errors, 1 warning``: each severity present, worst first."""
    return ", ".join(style.severity(f"{counts[s]} {_PLURAL[s] if counts[s] != 1 else s}", s)
                     for s in Severity if counts[s])


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
