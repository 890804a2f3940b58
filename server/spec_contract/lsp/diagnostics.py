"""Findings → LSP diagnostics, per-file result ids, and the pull-model reports built from them.

The class-name range carries the diagnostic; related information points at every worker call site that
needs the member and at the inner class's implementation; ``data`` carries the key the quick fixes use to
find the finding again in the (possibly newer) analysis.

Result ids are ``<content hash>.<generation>``, where the generation is the index generation at which this
file's diagnostics last changed. Unlike ``uri@version`` this survives a close/reopen (versions restart) and
changes when an edit in *another* file changes this file's findings.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import cattrs
from lsprotocol import types
from pygls.workspace import PositionCodec

from spec_contract.engine import Severity
from spec_contract.lsp.convert import to_range, uri_of
from spec_contract.lsp.data import DiagnosticData, FindingKey
from spec_contract.lsp.workspace import FileReport, Folder

if TYPE_CHECKING:
    from spec_contract.engine import Analysis, Finding

SOURCE = "spec-contract"
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


def finding_key(finding: Finding) -> FindingKey:
    """What identifies a finding across analyses (spans move while typing; these do not)."""
    return (finding.code, finding.class_qualname, finding.member)


def diagnostic_data(finding: Finding) -> DiagnosticData:
    return DiagnosticData(
        code=finding.code,
        class_qualname=finding.class_qualname,
        class_name=finding.class_name,
        member=finding.member,
        delegate=finding.delegate,
    )


def severity_of(finding: Finding) -> types.DiagnosticSeverity:
    return SEVERITY.get(finding.severity, types.DiagnosticSeverity.Error)


def to_diagnostic(
    finding: Finding, lines_for: Callable[[str], Sequence[str]], codec: PositionCodec, related: bool
) -> types.Diagnostic:
    related_information = None
    if related:
        related_information = [
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=uri_of(site.path), range=to_range(site.span, lines_for(site.path), codec)
                ),
                message=(
                    f"{site.role} model {'use' if not site.is_call else 'call'} of `{site.member}`"
                    f"{' (guarded)' if site.guarded else ''}: {site.text}"
                ),
            )
            for site in finding.call_sites
        ]
        provided = _provider_information(finding, lines_for, codec)
        if provided is not None:
            related_information.append(provided)
    message = finding.message or (
        f"`{finding.class_name}` does not forward `{finding.member}` to `self.{finding.delegate}` "
        f"({finding.inner_class})"
    )
    return types.Diagnostic(
        range=to_range(finding.span, lines_for(finding.path), codec),
        message=message,
        severity=severity_of(finding),
        code=finding.code,
        source=SOURCE,
        related_information=related_information,
        data=diagnostic_data(finding),
    )


def _provider_information(
    finding: Finding, lines_for: Callable[[str], Sequence[str]], codec: PositionCodec
) -> types.DiagnosticRelatedInformation | None:
    """The related information at the finding's ``provider``, worded by what that place is; None when the
    finding has none (SC011's worker line, a language model whose class is chosen at run time).

    The provider is not always the inner class: for an implementation (SC010, SC012, SC014) it is the class the
    fix copies, which no inner class is (``inner_class`` is empty, or names the model the member is implemented
    in); for a broken forward (SC013) it is the forward itself; for a Protocol gate, the Protocol."""
    provider = finding.provider
    if not provider.path:
        return None
    owner = provider.class_name.rsplit(".", 1)[-1]
    member = f"`{finding.member}`"
    if any(provision.like == provider.class_name for _, provision in finding.implements):
        message = f"`{owner}` implements {member}: the class the fix copies it from"
    elif finding.code == "SC013":  # broken-forward (codes are fixed, see design.md)
        message = f"`{owner}.{finding.member}` hands it to `self.{finding.delegate}` (`{finding.inner_class}`), " \
                  "which does not have it"
    elif provider.kind == "class":
        message = f"{member}, the Protocol the engine checks the class against"
    elif finding.inner_class:
        via = f" (`self.{finding.delegate}`)" if finding.delegate else ""
        inherited = f", from `{owner}`" if owner and owner != finding.inner_class else ""
        message = f"`{finding.inner_class}`{via} has {member}{inherited}"
    else:
        message = f"`{owner}` has {member}"
    location = types.Location(uri=uri_of(provider.path), range=to_range(provider.span, lines_for(provider.path), codec))
    return types.DiagnosticRelatedInformation(location=location, message=message)


def fingerprint(diagnostics: Sequence[types.Diagnostic], converter: cattrs.Converter) -> str:
    payload = json.dumps(converter.unstructure(list(diagnostics)), sort_keys=True)
    return hashlib.sha1(payload.encode("utf-8")).hexdigest()


def content_hash(text: str | None) -> str:
    return hashlib.sha1((text or "").encode("utf-8")).hexdigest()[:16]


def compute_reports(
    previous: dict[str, FileReport],
    analysis: Analysis,
    paths: Iterable[str],
    lines_for: Callable[[str], Sequence[str]],
    codec: PositionCodec,
    related: bool,
    converter: cattrs.Converter,
) -> tuple[dict[str, FileReport], dict[str, bool]]:
    """New reports for ``paths`` (others carried over) and, per path, whether its diagnostics changed;
    ``lines_for``: the lines of the texts ``analysis`` read (``SourceLines(analysis)``), which a report's result
    id names.

    Each file's diagnostics go in order of severity, the most severe first, in the engine's order within one: the
    order VS Code's hover, Emacs and Neovim's diagnostics float list them in. (Neovim's sign and virtual text show
    a line's last diagnostic unless sorted by severity; the Neovim configurations in ``editors/neovim`` sort
    this server's, in its own diagnostic namespaces.)

    Pure, so it can run on the engine thread while the event loop keeps reading the previous reports.
    A file whose findings all went away keeps an (empty) report so that the client gets told to clear it.
    """
    reports = dict(previous)
    changed: dict[str, bool] = {}
    by_path: dict[str, list[Finding]] = {}
    for finding in analysis.findings:  # and each class's own finding a worker line's gathers (``in_files``)
        by_path.setdefault(finding.path, []).append(finding)
        for record in finding.records:
            if record.path != finding.path:
                by_path.setdefault(record.path, []).append(record)
    touched = analysis.changed_paths  # None: unknown, every file may have changed
    for path in paths:
        findings = tuple(sorted(by_path.get(path, ()), key=severity_of))
        old = previous.get(path)
        if old is not None and touched is not None and path not in touched and old.findings == findings:
            changed[path] = False  # same text, same findings: the report stands as it is (a keystroke elsewhere)
            continue
        diagnostics = [to_diagnostic(f, lines_for, codec, related) for f in findings]
        new_fingerprint = fingerprint(diagnostics, converter)
        text_id = content_hash("".join(lines_for(path)))  # the text its lines were read from, read once
        if old is not None and old.fingerprint == new_fingerprint:
            generation = old.result_id.split(".", 1)[1]
            reports[path] = FileReport(old.diagnostics, old.fingerprint, f"{text_id}.{generation}", findings)
            changed[path] = False
        else:
            reports[path] = FileReport(diagnostics, new_fingerprint, f"{text_id}.{analysis.generation}", findings)
            changed[path] = True
    return reports, changed


def document_report(
    report: FileReport | None, previous_result_id: str | None
) -> types.RelatedFullDocumentDiagnosticReport | types.RelatedUnchangedDocumentDiagnosticReport:
    if report is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    if previous_result_id is not None and previous_result_id == report.result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=report.result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=report.diagnostics, result_id=report.result_id)


def workspace_items(
    folder: Folder, previous: dict[str, str], versions: dict[str, int]
) -> list[types.WorkspaceFullDocumentDiagnosticReport | types.WorkspaceUnchangedDocumentDiagnosticReport]:
    """One entry per file the folder has (or had) diagnostics for; unchanged ones by result id only."""
    items: list = []
    for path, report in sorted(folder.reports.items()):
        uri = uri_of(path)
        version = versions.get(uri)
        if previous.get(uri) == report.result_id:
            items.append(
                types.WorkspaceUnchangedDocumentDiagnosticReport(
                    uri=uri, version=version, result_id=report.result_id
                )
            )
        else:
            items.append(
                types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, version=version, items=report.diagnostics, result_id=report.result_id
                )
            )
    return items
