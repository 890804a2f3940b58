"""Hover text (markdown with ``file:///…#Lnn`` links) and go-to-implementation for the contract.

Three places answer: a model class name (each contract member: provided / forwarded / missing), a contract
method's definition in a model (which worker lines call it), and a worker call site's member name (role,
required or optional, which models implement it, which wrappers lack it). The engine answers the position
queries; this module only words the answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace import PositionCodec

from spec_contract.engine import crash_stands, loaded_words, says_a_crash
from spec_contract.lsp.convert import to_range, uri_of
from spec_contract.lsp.diagnostics import severity_of

if TYPE_CHECKING:
    from spec_contract.engine import (
        AlgorithmStatus,
        Analysis,
        CallSite,
        ClassStatus,
        ContractEntry,
        Finding,
        MemberStatus,
        Provider,
        Provision,
    )

STATUS_WORDS = {"provided": "provided", "forwarded": "forwarded", "missing": "**missing**"}


@dataclass(frozen=True)
class Places:
    """How the hover names a place: ``path:line`` relative to the folder (0-based ``line`` in, 1-based out), as a
    ``file:///…#L12`` link where the client follows Markdown links (VS Code, Emacs with markdown-mode); plain
    for Neovim, which follows none (see ``ClientFeatures.hover_links``), and in a plain-text hover."""

    relative: Callable[[str], str]
    links: bool = True

    def __call__(self, path: str, line: int) -> str:
        text = f"`{self.relative(path)}:{line + 1}`"
        return f"[{text}]({uri_of(path)}#L{line + 1})" if self.links else text


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def class_markdown(status: ClassStatus, place: Places, findings: Sequence[Finding] = ()) -> str:
    """The class's contract members, those with a finding first, the most severe first, each worded as its
    diagnostic is (code and severity); a member not forwarded that no finding reports is said to be so."""
    worst: dict[str, Finding] = {}
    for finding in sorted(findings, key=severity_of):
        worst.setdefault(finding.member, finding)
    counts = Counter(str(severity_of(f).name).lower() for f in findings)
    tally = ", ".join(f"{n} {word}{'s' if n > 1 and word != 'information' else ''}"
                      for word in ("error", "warning", "information", "hint") if (n := counts[word]))
    lines = [f"**`{status.name}`** — speculative-decoding contract ({len(status.members)} members"
             f"{'; ' + tally if tally else ''})", ""]

    def rank(member: MemberStatus) -> tuple[int, int]:
        finding = worst.get(member.member)
        return (int(severity_of(finding)), 0) if finding else (9, 0 if member.status == "missing" else 1)

    for member in sorted(status.members, key=rank):
        found = worst.get(member.member)
        roles = "/".join(member.roles)
        if found is not None:
            state = f"**missing**, {found.code} {str(severity_of(found).name).lower()}"
        elif member.status == "missing":
            state = "not forwarded, no finding"
        else:
            state = STATUS_WORDS.get(member.status, member.status)
        text = f"- `{member.member}` ({roles}): {state}"
        if member.status == "forwarded" and member.delegate:
            text += f" to `self.{member.delegate}`"
        lines.append(text)
        # the details on lines of their own, short enough for a terminal's float
        if member.status == "missing" and member.inner_class:
            via = f" via `self.{member.delegate}`" if member.delegate else ""
            lines.append(f"  - `{_short(member.inner_class)}` provides it{via}")
        elif member.status == "missing" and member.provision is not None:
            lines.append(f"  - {provision_words(member.provision)}")
        if member.call_sites:
            lines.append(f"  - {_called_at(member.call_sites, place)}")
    if status.algorithms:
        lines += ["", "**Speculative algorithms**", ""]
        # the crashes a finding says (as the matrix counts them: a guarded use's finding confirms none)
        reported = {m for f in findings if says_a_crash(f) for m in (f.member, *(also.member for also in f.also))}
        # a crash the check says happens only under a condition (SC004, SC015), as the matrix notes it
        conditional = {f.member: f.condition or "a rare condition holds" for f in findings
                       if f.code in ("SC004", "SC015")}
        for algorithm in status.algorithms:
            words = _algorithm_words(algorithm, place, reported, conditional)
            unlisted = _unlisted_errors(findings, algorithm)
            if unlisted:  # as the matrix's verdict: the check's word that the run crashes there stands
                listed = words.partition("\n")[2] if words.startswith("crashes") else ""
                words = "crashes" + "".join(
                    f"\n  - `{f.member}` at {place(site.path, site.span.line)} ({site.phase}): {f.code}"
                    for f in unlisted for site in [next((s for s in f.call_sites if s.serves(algorithm.algorithm)),
                                                        f.call_sites[0])]) + (f"\n{listed}" if listed else "")
            lines.append(f"- {algorithm.algorithm}: {words}")
    return "\n".join(lines)


def _unlisted_errors(findings: Sequence[Finding], algorithm: AlgorithmStatus) -> list[Finding]:
    """The check's errors of the class that say a run of the algorithm dies where its status lists no crash (a
    guarded read whose value the loader shares with a draft that has none, SC001): the finding is the
    algorithm's, or a use it names that the run reaches is neither guarded nor conditional (as ``verdict`` asks
    it of a launch)."""
    listed = {c.member for c in algorithm.crashes if c.member in algorithm.members}
    name = algorithm.algorithm
    return [f for f in findings if f.severity == "error" and f.code != "SC007" and not f.classes
            and f.member not in listed and crash_stands(f, name, lambda site: site.serves(name))]


def _called_at(sites: Sequence[CallSite], place: Places) -> str:
    """Where the workers use the member: the first place, and how many more there are."""
    first = sites[0]
    more = len(sites) - 1
    others = f" and at {more} more worker line{'s' if more > 1 else ''}" if more else ""
    return f"called at {place(first.path, first.span.line)} ({first.phase}){others}"


def provision_words(provision: Provision) -> str:
    """How a missing member can be provided, as hover and messages say it."""
    if provision.how == "forward":
        return f"forward it to `self.{provision.delegate}` (`{_short(provision.inner_class or '')}` has it)"
    also = provision.capture.words() if provision.capture is not None else ""
    if provision.how == "implement":
        return f"implement like `{_short(provision.like or '')}`{also}"
    if provision.how == "both":
        return (f"implement it in `{_short(provision.inner_class or '')}` like `{_short(provision.like or '')}`"
                f"{also}, and forward it to `self.{provision.delegate}`")
    return f"cannot tell how to provide it: {provision.why}"


def _algorithm_words(algorithm: AlgorithmStatus, place: Places, reported: set[str],
                     conditional: dict[str, str] | None = None) -> str:
    """What a run of the algorithm meets, as the matrix and preflight say it (``verdict``): a crash of a member
    no finding ``reported`` is not counted (the check's reasons to report none, such as a guard in another
    method, stand), and is named as such; one the check says happens under a condition (``conditional``:
    member → condition) is named with it."""
    conditional = conditional or {}
    crashes = [c for c in algorithm.crashes if c.member in algorithm.members]
    uncounted = "".join(
        f"\n  - lacks `{c.member}`, which {place(c.site.path, c.site.span.line)} uses ({c.phase}); "
        + (f"used only when {conditional[c.member]}: the run crashes then" if c.member in conditional
           else "check reports no crash for it, so it is not counted")
        for c in crashes if c.member not in reported)
    if algorithm.state == "crashes" and all(c.member not in reported for c in crashes):
        degraded = ", degraded: it lacks " + ", ".join(f"`{m}`" for m in algorithm.degraded) \
            if algorithm.degraded else ""
        return f"supported{degraded}{uncounted}"
    if algorithm.state == "supported":
        return "supported"
    if algorithm.state == "refused":
        where = (f" at {place(algorithm.gate.path, algorithm.gate.span.line)} ({algorithm.gate.phase})"
                 if algorithm.gate else "")
        return f"not supported, refused{where} — {algorithm.why}"
    if algorithm.state == "not-its-draft" and algorithm.instead is not None:
        architectures, (path, line) = algorithm.instead
        return f"never its draft — the engine's config loads {loaded_words(architectures)} instead ({place(path, line)})"
    if algorithm.state == "unverifiable":
        return f"cannot be told here — {algorithm.why}"
    if algorithm.state == "degraded":
        return "supported, degraded: it lacks " + ", ".join(f"`{m}`" for m in algorithm.degraded)
    # each crash on a line of its own under the algorithm's, its fix on the next: short lines for a terminal; a
    # class that plays both roles crashes in one of them only, as the matrix's row of that role says
    roles = {str(c.role) for c in crashes if c.member in reported}
    return "crashes" + (f" as the {roles.pop()}" if len(roles) == 1 else "") + "".join(
        f"\n  - `{crash.member}` at {place(crash.site.path, crash.site.span.line)} ({crash.phase})"
        f"\n    - {provision_words(crash.provision)}"
        for crash in crashes if crash.member in reported) + uncounted


def definition_markdown(member: str, entries: Sequence[ContractEntry], place: Places) -> str:
    lines = [f"**`{member}`** is part of the speculative-decoding contract", ""]
    for entry in entries:
        need = "required" if entry.required else "optional"
        for site in entry.call_sites:
            guard = ", guarded" if site.guarded else ""
            lines.append(
                f"- {entry.role} model, {need}: called by {place(site.path, site.span.line)} "
                f"({site.phase}{guard})"
                f" — `{site.text}`"
            )
    return "\n".join(lines)


def call_site_markdown(
    site: CallSite,
    entry: ContractEntry | None,
    implementers: Sequence[Provider],
    lacking: Sequence[Finding],
    place: Places,
) -> str:
    need = "required" if entry is None or entry.required else "optional (every use is guarded)"
    lines = [f"**`{site.member}`** on the {site.role} model — {need} ({site.phase})", ""]
    if implementers:
        lines.append("Implemented by:")
        lines += [
            f"- `{_short(p.class_name)}` ({place(p.path, p.span.line)})" for p in implementers
        ]
    else:
        lines.append("No model class in this workspace implements it.")
    if lacking:
        lines += ["", "Wrappers that do not forward it:"]
        lines += [
            f"- `{f.class_name}` ({place(f.path, f.span.line)}) — `self.{f.delegate}` is "
            f"`{f.inner_class}`"
            for f in lacking
        ]
    return "\n".join(lines)


def hover_for(
    analysis: Analysis,
    path: str,
    line: int,
    col: int,
    place: Places,
    lines_for: Callable[[str], Sequence[str]],
    codec: PositionCodec,
    markdown: bool,
) -> types.Hover | None:
    """The hover at a code-point position, or None (runs on the executor thread: engine queries)."""
    value: str | None = None
    span = None
    status = analysis.class_at(path, line, col)
    if status is not None and status.members:
        findings = [f for f in analysis.findings_for(path) if f.class_qualname == status.qualname]
        value, span = class_markdown(status, place, findings), status.span
    if value is None:
        definition = analysis.member_definition_at(path, line, col)
        if definition is not None and definition[1]:
            value = definition_markdown(definition[0], definition[1], place)
    if value is None:
        site = analysis.call_site_at(path, line, col)
        if site is not None:
            entry = analysis.contract.get(site.role, site.member)
            value = call_site_markdown(
                site, entry, analysis.implementers(site.member), analysis.lacking(site.member), place
            )
            span = site.span
    if value is None:
        return None
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText, value=value
        ),
        range=to_range(span, lines_for(path), codec) if span is not None else None,
    )


def implementations_for(
    analysis: Analysis, path: str, line: int, col: int, lines_for: Callable[[str], Sequence[str]], codec: PositionCodec
) -> list[types.Location]:
    """Every model class providing the member under the cursor at a worker call site."""
    site = analysis.call_site_at(path, line, col)
    if site is None:
        return []
    return [
        types.Location(uri=uri_of(p.path), range=to_range(p.span, lines_for(p.path), codec))
        for p in analysis.implementers(site.member)
    ]
