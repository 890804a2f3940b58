"""The session's decisions without a process: debounce, freshness, request snapshots and what gets published.

A :class:`Session` is driven directly, with a recording editor (the client side) and a stand-in project whose
analyses hold real engine findings.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.workspace import PositionCodec
from spec_contract.engine import CallSite, Contract, ContractEntry, Finding, Role, Span
from spec_contract.lsp import indexing
from spec_contract.lsp.data import DiagnosticData, converter_factory
from spec_contract.lsp.features import ClientFeatures
from spec_contract.lsp.session import Session
from spec_contract.lsp.settings import Settings
from spec_contract.lsp.workspace import Folder

ROOT = Path("/w")
WRAPPER = "/w/llava.py"
OTHER = "/w/other.py"
TEXT = "class Wrapper:\n    pass\n"


@dataclass
class Document:
    source: str
    version: int | None = 1


@dataclass
class Editor:
    """The client, as the session sees it: open buffers in, notifications out."""

    documents: dict[str, Document] = field(default_factory=dict)
    codec: PositionCodec = field(default_factory=lambda: PositionCodec("utf-16"))
    converter: Any = field(default_factory=converter_factory)
    published: list[tuple[str, list[types.Diagnostic], int | None]] = field(default_factory=list)
    refreshes: int = 0
    logged: list[str] = field(default_factory=list)

    def publish_diagnostics(self, uri: str, items: list[types.Diagnostic], version: int | None) -> None:
        self.published.append((uri, items, version))

    def refresh_diagnostics(self) -> None:
        self.refreshes += 1

    def log(self, message: str, level: types.MessageType = types.MessageType.Log) -> None:
        self.logged.append(message)

    def log_exception(self, where: str, exc: BaseException) -> None:
        self.logged.append(f"{where}: {exc}")

    def warn_user(self, message: str) -> None:
        self.logged.append(message)

    async def configuration(self, scope_uri: str, section: str) -> Sequence[Any]:
        return []

    async def watch_files(self, globs: Sequence[str]) -> None:
        return None

    async def begin_progress(self, title: str, message: str) -> str | None:
        return None

    def report_progress(self, token: str, message: str, percentage: int) -> None:
        return None

    def end_progress(self, token: str, message: str) -> None:
        return None


def finding(member: str = "get_embed_and_head") -> Finding:
    return Finding(
        code="SC001", severity="error", path=WRAPPER, span=Span(0, 6, 0, 13), class_name="Wrapper",
        class_qualname="m.Wrapper", member=member, roles=("target",), delegate="language_model",
        inner_class="Llama", provider=None, call_sites=(), message="msg",
    )


@dataclass
class Analysis:
    generation: int
    findings: tuple[Finding, ...]
    sources: dict[str, str]
    changed_paths: frozenset[str] | None = None
    focus: frozenset[str] | None = None
    problems: frozenset[str] = frozenset()
    contract: Contract = Contract()

    def source(self, path: str) -> str | None:
        return self.sources.get(path)

    def findings_for(self, path: str) -> list[Finding]:
        return [f for f in self.findings if f.path == path]


class Project:
    """Analyses whose findings are one per member named in the wrapper's overlay (``# member`` lines)."""

    def __init__(self) -> None:
        self.overlays: dict[str, str] = {}
        self.overlay_calls: list[tuple[str, str | None]] = []
        self.analyses = 0

    def set_overlay(self, path: str, text: str) -> None:
        self.overlays[path] = text
        self.overlay_calls.append((path, text))

    def clear_overlay(self, path: str) -> None:
        self.overlays.pop(path, None)
        self.overlay_calls.append((path, None))

    def analyze(self, focus: Any = None) -> Analysis:
        self.analyses += 1
        text = self.overlays.get(WRAPPER, TEXT)
        members = [line[2:] for line in text.splitlines() if line.startswith("# ")]
        return Analysis(self.analyses, tuple(finding(m) for m in members), {WRAPPER: text})


def session_with(features: ClientFeatures) -> tuple[Session, Editor, Project, Folder]:
    """A session with one ready folder, /w, analysed by a stand-in project."""
    editor = Editor()
    session = Session(editor)
    session.features = features
    folder = session.folders.add(ROOT.as_uri(), "w")
    assert folder is not None
    project = Project()
    folder.project = project
    folder.ready.set()
    return session, editor, project, folder


PUSH = ClientFeatures()
PULL = ClientFeatures(pull_diagnostics=True, diagnostic_refresh=True)
URI = Path(WRAPPER).as_uri()


async def test_a_burst_of_edits_reaches_the_engine_once_with_the_last_text():
    session, editor, project, folder = session_with(PUSH)
    folder.settings = Settings(debounce_ms=10)
    for version, text in enumerate(["# a\n", "# a\n# b\n", "# a\n# b\n# c\n"], start=1):
        editor.documents[URI] = Document(text, version)
        session.schedule_change(URI, folder)
    await asyncio.wait_for(asyncio.gather(*list(session.pending.values()), return_exceptions=True), 5)
    assert project.overlay_calls == [(WRAPPER, "# a\n# b\n# c\n")]
    assert project.analyses == 1
    ((uri, items, version),) = editor.published
    assert uri == URI and version == 3  # the diagnostics describe exactly the buffer the client has
    assert [d.data.member for d in items if isinstance(d.data, DiagnosticData)] == ["a", "b", "c"]
    session.shutdown()


async def test_a_request_applies_the_pending_edit_at_once_and_sees_it():
    session, editor, project, folder = session_with(PUSH)
    folder.settings = Settings(debounce_ms=60_000)  # the debounce alone would never fire
    editor.documents[URI] = Document("# a\n")
    session.schedule_change(URI, folder)
    context = await asyncio.wait_for(session.context(URI), 5)
    assert context is not None
    assert (context.path, context.folder, context.uri) == (WRAPPER, folder, URI)
    assert [f.member for f in context.analysis.findings] == ["a"]
    assert context.engine_position(types.Position(0, 3)) == (0, 3)
    assert session.pending == {}
    assert await session.context("untitled:Untitled-1") is None
    assert await session.context(Path("/elsewhere/m.py").as_uri()) is None
    session.shutdown()


async def test_push_clients_get_changed_files_only_and_a_version_only_for_the_analysed_buffer():
    session, editor, project, folder = session_with(PUSH)
    project.overlays[WRAPPER] = "# a\n"
    await session.refresh(folder)
    assert [(uri, version) for uri, _, version in editor.published] == [(URI, None)]  # not open: no version
    folder.dirty = True
    await session.refresh(folder)  # same findings, same text: nothing to tell
    assert len(editor.published) == 1
    project.overlays[WRAPPER] = TEXT
    folder.dirty = True
    await session.refresh(folder)  # the finding went away: an empty list clears it
    assert editor.published[-1][:2] == (URI, [])
    await session.clear(folder)  # nothing is shown any more: nothing to withdraw
    assert len(editor.published) == 2
    session.shutdown()


async def test_pull_clients_are_asked_to_pull_again_instead_of_being_pushed_to():
    session, editor, project, folder = session_with(PULL)
    project.overlays[WRAPPER] = "# a\n"
    await session.refresh(folder)
    assert editor.published == [] and editor.refreshes == 1
    assert [d.code for d in folder.reports[WRAPPER].diagnostics] == ["SC001"]
    folder.dirty = True
    await session.refresh(folder)  # nothing changed: no refresh
    assert editor.refreshes == 1
    await session.clear(folder)
    assert editor.refreshes == 2 and folder.reports == {}
    session.shutdown()


async def test_a_failing_background_task_is_logged():
    session, editor, _, _ = session_with(PUSH)

    async def fail() -> None:
        raise RuntimeError("boom")

    task = session.spawn(fail(), "trying")
    await asyncio.gather(task, return_exceptions=True)
    await asyncio.sleep(0)
    assert editor.logged == ["trying: boom"] and session.background == set()
    session.shutdown()


def test_client_features_are_resolved_once_from_the_capabilities():
    neovim = ClientFeatures.of(types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            diagnostic=types.DiagnosticClientCapabilities(related_information=True),
            code_action=types.CodeActionClientCapabilities(
                resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"])),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.PlainText]),
        ),
        workspace=types.WorkspaceClientCapabilities(
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True), configuration=True),
    ))
    assert neovim == ClientFeatures(
        pull_diagnostics=True, diagnostic_refresh=True, related_information=True, configuration=True,
        resolves_edits=True, markdown_hover=False,
    )
    # Pull without refresh would leave stale diagnostics: such a client is pushed to.
    no_refresh = ClientFeatures.of(types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities())))
    assert not no_refresh.pull_diagnostics and no_refresh.markdown_hover


async def test_the_first_pass_writes_its_summaries_to_the_cache_once_its_diagnostics_are_out(tmp_path):
    """The focused analysis of the open file keeps its summaries until the file's diagnostics are published
    (writing them was a tenth of it), then the session writes them: an editor closed before the whole
    analysis ends still leaves them for its next start."""
    from spec_contract.engine import Project, load_config

    root = tmp_path / "demo"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "demo", root,
                    ignore=shutil.ignore_patterns("__pycache__", ".spec-contract-cache"))
    cache = tmp_path / "cache"
    editor = Editor()
    session = Session(editor)
    folder = session.folders.add(root.as_uri(), "demo")
    assert folder is not None
    folder.project = Project(root, load_config(root), cache_dir=cache)
    llava = str((root / "minisgl/models/llava.py").resolve())
    summaries: list[list[Path]] = []

    def publish(uri: str, items: list[types.Diagnostic], version: int | None) -> None:
        summaries.append(list(cache.rglob("*.pickle")))
        editor.published.append((uri, items, version))

    editor.publish_diagnostics = publish  # type: ignore[method-assign]
    await indexing.first_pass(session, folder, {llava})
    assert [uri for uri, items, _ in editor.published if items] == [Path(llava).as_uri()]
    assert summaries == [[]]  # nothing written before the diagnostics went out
    assert folder.early.is_set() and list(cache.rglob("*.pickle"))  # then the worker's and the model's
    session.shutdown()


async def test_a_first_pass_answers_for_the_open_model_file_and_leaves_an_open_worker_to_the_whole_analysis():
    """A focused analysis checked the open files' classes only: the line of a worker where classes crash
    unrefused (SC011) lists those alone. The open model file's diagnostics come from it; the worker's wait
    for the whole analysis, which lists every class."""
    worker = "/w/worker.py"
    site = CallSite(worker, Span(3, 4, 3, 20), Role.TARGET, "get_embed_and_head", "m.get_embed_and_head()",
                    guarded=False, is_call=True)
    contract = Contract((ContractEntry(Role.TARGET, "get_embed_and_head", (site,)),))

    def on_line(*classes: str) -> Finding:
        return replace(finding(), code="SC011", path=worker, span=site.span, class_name="", message=", ".join(classes))

    class Focusing(Project):
        def analyze(self, focus: Any = None) -> Analysis:
            self.analyses += 1
            sources = {WRAPPER: TEXT, worker: "x\n" * 5}
            if focus is not None:
                return Analysis(self.analyses, (finding(), on_line("Wrapper")), sources, None, frozenset(focus),
                                contract=contract)
            return Analysis(self.analyses, (finding(), on_line("Wrapper", "Other")), sources, contract=contract)

        def write_summaries(self) -> None:
            return None

    editor = Editor()
    session = Session(editor)
    folder = session.folders.add(ROOT.as_uri(), "w")
    assert folder is not None
    folder.project = Focusing()
    worker_uri = Path(worker).as_uri()
    editor.documents.update({URI: Document(TEXT), worker_uri: Document("x\n" * 5)})

    await indexing.first_pass(session, folder, {WRAPPER, worker})
    assert [uri for uri, _, _ in editor.published] == [URI]  # not the worker's one-class list
    assert (await session.context(URI)).analysis.focus == {WRAPPER, worker}  # answered by the first pass
    waiting = asyncio.ensure_future(session.context(worker_uri))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not waiting.done()  # the worker's answer waits for the whole analysis

    folder.ready.set()
    context = await asyncio.wait_for(waiting, 5)
    assert context is not None and context.analysis.focus is None
    ((_, items, _),) = [p for p in editor.published if p[0] == worker_uri]
    assert [d.message for d in items] == ["Wrapper, Other"]
    session.shutdown()


async def test_a_request_while_the_edit_is_being_handed_to_the_engine_waits_for_it():
    # The debounce has fired and the buffer is on its way to the engine thread when the client pulls: the answer
    # must describe that buffer, not the analysis before it (answered at once, it was one edit behind).
    session, editor, project, folder = session_with(PULL)
    await session.refresh(folder)  # the analysis of the text on disk: no finding
    handing, release = threading.Event(), threading.Event()
    set_overlay = project.set_overlay

    def slow_set_overlay(path: str, text: str) -> None:
        handing.set()
        release.wait(10)
        set_overlay(path, text)

    project.set_overlay = slow_set_overlay  # type: ignore[method-assign]
    folder.settings = Settings(debounce_ms=0)
    editor.documents[URI] = Document("# a\n", 2)
    session.schedule_change(URI, folder)
    while not handing.is_set():  # the debounced task is now inside apply_overlay
        await asyncio.sleep(0.001)
    request = asyncio.ensure_future(session.context(URI))
    for _ in range(20):  # let the request run as far as it can before the engine thread is free again
        await asyncio.sleep(0)
    release.set()
    context = await asyncio.wait_for(request, 5)
    assert context is not None
    assert [f.member for f in context.analysis.findings] == ["a"]
    session.shutdown()
