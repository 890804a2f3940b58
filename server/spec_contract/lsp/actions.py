"""Code actions for findings: add one delegation, add all of a class's, fix the whole file, or suppress.

Which actions exist is decided from the latest analysis (findings whose class name intersects the requested
range, plus those named by the client's ``context.diagnostics``); the edits themselves come from the engine
(``engine.fix``) and are converted to the client's position encoding here. Clients that can resolve code
actions lazily (``resolveSupport.properties`` contains ``edit``) get the list without edits and ask for an
edit only for the action the user picks; everyone else gets the edits eagerly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace import PositionCodec

from spec_contract.engine import BY_CODE, IMPLEMENTABLE, MISSING_CAPABILITY, Fix
from spec_contract.lsp.convert import to_range, uri_of
from spec_contract.lsp.data import Action, CodeActionData, FindingKey
from spec_contract.lsp.diagnostics import SOURCE, finding_key, severity_of

if TYPE_CHECKING:
    from spec_contract.engine import Analysis, Finding, Fixes, Span, TextEdit

FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
KINDS = [types.CodeActionKind.QuickFix, types.CodeActionKind.Source, types.CodeActionKind.SourceFixAll,
         FIX_ALL_KIND]


def enable_kind(algorithm: str | None) -> str:
    """The source action that enables a refused algorithm on a class (SC012's fix): a change the user asks for,
    not the repair of a problem, so ``source.enableEagle3.spec-contract`` (a sub-kind of ``source``, named as
    ruff names ``source.fixAll.ruff``), which a client lists in its source-action menu and binds to a key."""
    return f"{types.CodeActionKind.Source.value}.enable{(algorithm or 'Algorithm').capitalize()}.{SOURCE}"
MAX_SINGLE_FIXES = 3  # per-finding fixes in one menu, the most severe first; "Add all" covers the rest


@dataclass(frozen=True)
class Planned:
    """An action before it has an edit: what it is called and which findings it fixes or suppresses."""

    title: str
    kind: str
    action: Action
    findings: tuple[Finding, ...]
    preferred: bool = False

    def data(self, uri: str) -> CodeActionData:
        return CodeActionData(uri, self.action, [finding_key(f) for f in self.findings])


def kind_allowed(kind: str, only: Sequence[str] | None) -> bool:
    """``context.only`` is a prefix filter on the dot-separated kind hierarchy."""
    if not only:
        return True
    return any(kind == want or kind.startswith(f"{want}.") for want in only)


def _intersects(span: Span, rng_lines: tuple[int, int]) -> bool:
    first, last = rng_lines
    return span.line <= last and span.end_line >= first


def _title(finding: Finding) -> str:
    """What the quick fix for one finding does; a capability fix forwards the gate member and those past it;
    an implement fix writes the members like the class they are modelled on (SC012's enables its algorithm;
    SC014's, a hint too, only implements the member a guarded call skips)."""
    if BY_CODE[finding.code].fix is Fix.IMPLEMENT:
        like = (finding.implements[0][1].like or "").rsplit(".", 1)[-1]
        if len(finding.implements) > 1 or finding.code == IMPLEMENTABLE.code:
            count = len(finding.implements)
            return (f"Enable {finding.algorithm} for `{finding.class_name}`: implement {count} "
                    f"member{'s' if count > 1 else ''} like `{like}`")
        provision = finding.implements[0][1]
        also = provision.capture.words() if provision.capture is not None else ""
        if provision.how == "both":
            return (f"Implement `{finding.member}` in `{provision.inner_class}` like `{like}`{also} and forward it "
                    f"to `self.{provision.delegate}`")
        return f"Implement `{finding.member}` like `{like}`{also}"
    if finding.also:
        count = 1 + len(finding.also)
        return f"Enable {finding.algorithm or 'the capability'} for `{finding.class_name}`: forward {count} members"
    if finding.code == MISSING_CAPABILITY.code:
        return f"Enable {finding.algorithm or 'the capability'} for `{finding.class_name}`: forward `{finding.member}`"
    return f"Add delegation of `{finding.member}` to `self.{finding.delegate}`"


def _fixable(finding: Finding) -> bool:
    """The finding's fix adds members: a forward, or an implementation when some model fits (else the message
    says what is missing)."""
    rule = BY_CODE[finding.code]
    return rule.forwards and (rule.fix is not Fix.IMPLEMENT and not finding.unfit or bool(finding.implements))


def _members_forwarded(findings: Sequence[Finding]) -> int:
    """How many members the edits for ``findings`` add: a capability finding forwards those past its gate too,
    an implement fix the members it writes."""
    return len({f.member for f in findings} | {also.member for f in findings for also in f.also}
               | {member for f in findings for member, _ in f.implements})


def plan(
    findings: Sequence[Finding],
    requested_lines: tuple[int, int],
    diagnostic_keys: Iterable[FindingKey],
    only: Sequence[str] | None,
) -> list[Planned]:
    """The actions to offer for one file's findings, in the order an editor should list them: the fix of the
    most severe finding here first (preferred), the fixes of the next most severe up to :data:`MAX_SINGLE_FIXES`,
    one "Add all N" per class (N: the members it adds), one "Ignore" per class (its most severe code), and the
    file-wide fix (a source action, not in the quick-fix menu); enabling a refused algorithm (SC012's hint) is
    a source action of its own for the class (see :func:`enable_kind`). A class with many findings so gets a handful of
    entries, not one per finding: the others are in "Add all"."""
    keys = set(diagnostic_keys)
    here = sorted((f for f in findings if _intersects(f.span, requested_lines) or finding_key(f) in keys),
                  key=severity_of)
    planned: list[Planned] = []
    for finding in here:
        if len(planned) == MAX_SINGLE_FIXES:
            break
        if finding.code == IMPLEMENTABLE.code:  # a source action, after the quick fixes
            continue
        if BY_CODE[finding.code].fix is Fix.DECLARE:  # not declared: the fix is a base class, not a forward
            planned.append(Planned(
                title=f"Declare `{finding.member}` on `{finding.class_name}`",
                kind=types.CodeActionKind.QuickFix.value, action="declare", findings=(finding,), preferred=True))
        elif _fixable(finding):
            planned.append(Planned(title=_title(finding), kind=types.CodeActionKind.QuickFix.value,
                                   action="delegate", findings=(finding,), preferred=True))
    planned += [Planned(title=_title(f), kind=enable_kind(f.algorithm), action="delegate", findings=(f,))
                for f in here if f.code == IMPLEMENTABLE.code and _fixable(f)]
    forwarding = [f for f in findings if _fixable(f)]
    classes = list(dict.fromkeys(f.class_qualname for f in here))
    for qualname in classes:
        class_findings = [f for f in forwarding if f.class_qualname == qualname]
        if _members_forwarded(class_findings) >= 2:  # two findings of one member (SC011, SC012) are one fix
            planned.append(Planned(
                title=f"Add all {_members_forwarded(class_findings)} missing delegations to "
                      f"`{class_findings[0].class_name}`",
                kind=types.CodeActionKind.QuickFix.value, action="delegateAll", findings=tuple(class_findings)))
    for qualname in classes:
        worst = next(f for f in here if f.class_qualname == qualname)
        planned.append(Planned(title=f"Ignore {worst.code} for this class", kind=types.CodeActionKind.QuickFix.value,
                               action="ignore", findings=(worst,)))
    if forwarding:
        planned.append(
            Planned(
                title=f"Add all missing delegations in this file ({SOURCE})",
                kind=FIX_ALL_KIND,
                action="fixAll",
                findings=tuple(forwarding),
            )
        )
    return [p for p in planned if kind_allowed(p.kind, only)]


def find(findings: Iterable[Finding], keys: Iterable[Sequence[str]]) -> list[Finding]:
    """The findings (of a newer analysis) that a resolve request's data names; gone ones are skipped."""
    wanted = [tuple(k) for k in keys]
    by_key = {finding_key(f): f for f in findings}
    return [by_key[k] for k in wanted if k in by_key]


def engine_edits(analysis: Analysis, action: Action, findings: Sequence[Finding]) -> Fixes:
    """The engine's edits for an action, and the classes it declines with why (runs on the executor thread:
    libcst is involved)."""
    from spec_contract.engine import declaration_edits, delegation_edits, suppression_edit

    if action == "declare":
        return declaration_edits(analysis, findings)
    if action == "ignore":
        return suppression_edit(analysis, findings[0])
    return delegation_edits(analysis, findings)


def declined_before(analysis: Analysis, planned: Sequence[Planned]) -> list[str | None]:
    """For each listed action, why the engine declines it before editing when it declines every class the
    action edits (the file does not parse, the class nests too deeply, …), else None: a client that resolves
    edits lazily must not be offered an action that resolves to nothing. Suppressions never are: a comment
    goes into any file that parses."""
    from spec_contract.engine import declined

    return [None if item.action == "ignore" else declined(analysis, item.findings, declaring=item.action == "declare")
            for item in planned]


def not_fixed(why: str) -> str:
    """The message that tells the user why a fix was not made, worded as ``check --fix`` words it."""
    return f"spec-contract: not fixed: {why}"


STALE = "the findings it fixes are gone since the actions were listed; ask for the actions again"


def workspace_edit(
    edits: Sequence[TextEdit],
    lines_for: Callable[[str], Sequence[str]],
    codec: PositionCodec,
    document_changes: bool,
    version_of: Callable[[str], int | None],
) -> types.WorkspaceEdit:
    """Engine TextEdits → ``documentChanges`` (versioned by the open buffer) or ``changes``, per capability."""
    by_uri: dict[str, list[types.TextEdit]] = {}
    for edit in edits:
        uri = uri_of(edit.path)
        by_uri.setdefault(uri, []).append(
            types.TextEdit(range=to_range(edit.span, lines_for(edit.path), codec), new_text=edit.new_text)
        )
    if document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version_of(uri)),
                    edits=text_edits,
                )
                for uri, text_edits in by_uri.items()
            ]
        )
    return types.WorkspaceEdit(changes=by_uri)


def to_code_action(
    planned: Planned,
    uri: str,
    diagnostics_by_key: dict[FindingKey, types.Diagnostic],
    edit: types.WorkspaceEdit | None,
    disabled: str | None = None,
) -> types.CodeAction:
    """The protocol's action; ``disabled`` (for clients with ``disabledSupport``) says why it cannot be made,
    and such an action carries neither an edit nor data to resolve."""
    related = [diagnostics_by_key[k] for k in (finding_key(f) for f in planned.findings) if k in diagnostics_by_key]
    return types.CodeAction(
        title=planned.title,
        kind=planned.kind,
        diagnostics=related or None,
        is_preferred=(planned.preferred and disabled is None) or None,
        edit=edit,
        disabled=types.CodeActionDisabled(reason=disabled) if disabled is not None else None,
        data=planned.data(uri) if disabled is None else None,
    )
