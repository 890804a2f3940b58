"""Findings → diagnostics, result ids, and unchanged reports."""

from pathlib import Path

from lsprotocol import types
from pygls.workspace import PositionCodec
from spec_contract.engine.results import CallSite, Finding, Provider, Span
from spec_contract.lsp.convert import SourceLines
from spec_contract.lsp.data import converter_factory
from spec_contract.lsp.diagnostics import compute_reports, document_report, to_diagnostic, workspace_items
from spec_contract.lsp.workspace import Folder, Folders


class Analysis:
    """The slice of the engine's Analysis that reporting reads, holding real engine result objects."""

    def __init__(self, generation, findings, sources, changed_paths=None):
        self.generation = generation
        self.findings = tuple(findings)
        self._sources = sources
        self.changed_paths = changed_paths

    def findings_for(self, path):
        return [f for f in self.findings if f.path == path]

    def source(self, path):
        return self._sources.get(path)


WRAPPER = "/w/llava.py"
SOURCES = {WRAPPER: "class Wrapper:\n    pass\n", "/w/eagle.py": "x\n" * 20, "/w/llama.py": "y\n" * 20}


def finding(member="get_embed_and_head", severity="error"):
    site = CallSite("/w/eagle.py", Span(10, 8, 10, 20), "target", member, "x.m()", False, True)
    return Finding(
        code="SC001", severity=severity, path=WRAPPER, span=Span(0, 6, 0, 13), class_name="Wrapper",
        class_qualname="m.Wrapper", member=member, roles=("target",), delegate="language_model",
        inner_class="Llama", provider=Provider("m.Llama", "/w/llama.py", Span(3, 8, 3, 20), "method"),
        call_sites=(site,), message="msg",
    )


def folder():
    return Folder(uri="file:///w", name="w", root=Path("/w"))


def test_diagnostic_fields():
    d = to_diagnostic(finding(severity="information"), SourceLines(Analysis(1, [], SOURCES)),
                      PositionCodec("utf-16"), related=True)
    assert d.range == types.Range(types.Position(0, 6), types.Position(0, 13))
    assert (d.code, d.source, d.severity, d.message) == ("SC001", "spec-contract", types.DiagnosticSeverity.Information, "msg")
    assert converter_factory().unstructure(d.data) == {"code": "SC001", "classQualname": "m.Wrapper", "className": "Wrapper",
                      "member": "get_embed_and_head", "delegate": "language_model"}
    assert [r.location.uri for r in d.related_information] == ["file:///w/eagle.py", "file:///w/llama.py"]
    plain = to_diagnostic(finding(), SourceLines(Analysis(1, [], SOURCES)), PositionCodec("utf-16"), related=False)
    assert plain.related_information is None


def test_result_ids_change_only_when_the_file_or_its_diagnostics_change():
    def reports_of(previous, analysis):  # as the session computes them: the lines of the analysis's texts
        return compute_reports(previous, analysis, [WRAPPER], SourceLines(analysis), PositionCodec("utf-16"), True,
                               converter_factory())

    reports, changed = reports_of({}, Analysis(1, [finding()], SOURCES))
    assert changed == {WRAPPER: True}
    first = reports[WRAPPER].result_id
    # Another file changed (new generation), this file's diagnostics did not: same id.
    reports, changed = reports_of(reports, Analysis(2, [finding()], SOURCES))
    assert changed == {WRAPPER: False} and reports[WRAPPER].result_id == first
    assert isinstance(document_report(reports[WRAPPER], first), types.RelatedUnchangedDocumentDiagnosticReport)
    # The finding went away: a changed (empty) report, so the client clears it.
    reports, changed = reports_of(reports, Analysis(3, [], SOURCES))
    assert changed == {WRAPPER: True}
    report = document_report(reports[WRAPPER], first)
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport) and report.items == []
    assert report.result_id != first
    # Same findings but different text (the wrapper was edited): new id.
    edited = {**SOURCES, WRAPPER: "class Wrapper:\n    x = 1\n"}
    reports, _ = reports_of(reports, Analysis(4, [], edited))
    assert reports[WRAPPER].result_id != report.result_id


def test_workspace_items_mark_unchanged_files():
    f = folder()
    f.reports, _ = compute_reports({}, Analysis(1, [finding()], SOURCES), [WRAPPER],
                                   SourceLines(Analysis(1, [], SOURCES)), PositionCodec("utf-16"), True, converter_factory())
    rid = f.reports[WRAPPER].result_id
    (full,) = workspace_items(f, {}, {"file:///w/llava.py": 4})
    assert isinstance(full, types.WorkspaceFullDocumentDiagnosticReport) and full.version == 4
    (same,) = workspace_items(f, {"file:///w/llava.py": rid}, {})
    assert isinstance(same, types.WorkspaceUnchangedDocumentDiagnosticReport) and same.version is None


def test_unknown_document_gets_an_empty_full_report():
    report = document_report(None, "whatever")
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport) and report.items == []


def test_files_belong_to_the_innermost_folder():
    folders = Folders()
    outer = folders.add("file:///w", "w")
    inner = folders.add("file:///w/pkg", "pkg")
    assert folders.add("untitled:x") is None
    assert folders.for_path("/w/pkg/m.py") is inner
    assert folders.for_path("/w/m.py") is outer
    assert folders.for_path("/elsewhere/m.py") is None
    folders.remove("file:///w/pkg")
    assert folders.for_path("/w/pkg/m.py") is outer


def test_a_file_whose_text_and_findings_did_not_change_keeps_its_report_without_recomputing_it():
    lines = SourceLines(Analysis(1, [], SOURCES))
    args = (lines, PositionCodec("utf-16"), True, converter_factory())
    reports, _ = compute_reports({}, Analysis(1, [finding()], SOURCES), [WRAPPER], *args)
    # A keystroke in another file: this one is not among the changed paths and its findings are equal.
    again, changed = compute_reports(reports, Analysis(2, [finding()], SOURCES, frozenset({"/w/other.py"})),
                                     [WRAPPER], *args)
    assert changed == {WRAPPER: False}
    assert again[WRAPPER] is reports[WRAPPER]
    # The file itself changed: its report is recomputed (same diagnostics, so same result id).
    edited, changed = compute_reports(reports, Analysis(3, [finding()], SOURCES, frozenset({WRAPPER})),
                                      [WRAPPER], *args)
    assert changed == {WRAPPER: False}
    assert edited[WRAPPER] is not reports[WRAPPER]
    assert edited[WRAPPER].result_id == reports[WRAPPER].result_id
