"""Documents no workspace folder can analyse: single-file mode (no folder at all), an editor opened on a
subfolder of the project, and a project that cannot be analysed anywhere (one message, with the fix)."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

from lsp_harness import CLIENTS, TIMEOUT, client_info, diagnostics_now, initialize, members, open_document, until
from lsprotocol import types
from spec_contract.lsp.workspace import LOOSE_FOLDER_FILES

LLAVA = "minisgl/models/llava.py"
EXPECTED = ["get_embed_and_head", "set_eagle3_layers_to_capture"]


async def diagnostics_of(client, uri: str) -> list[types.Diagnostic]:
    """The document's diagnostics once the discovered project's analysis published (or answers) them: the
    project is found and analysed in the background after the document opened."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        items = [d for d in await diagnostics_now(client, uri) if d.source == "spec-contract"]
        if len(items) >= len(EXPECTED):
            return items
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {TIMEOUT:.0f}s waiting for the diagnostics of {uri}")
        await asyncio.sleep(0.1)


async def test_single_file_mode_analyses_the_document_in_its_discovered_project(client, demo: Path):
    await initialize(client, [])
    uri = open_document(client, demo / LLAVA)
    items = await diagnostics_of(client, uri)
    assert members(items) == EXPECTED
    assert not client.messages  # nothing to complain about: the project was found


async def test_a_workspace_folder_inside_the_project_hands_its_files_to_the_project(client, demo: Path):
    await initialize(client, [demo / "minisgl" / "models"])
    uri = open_document(client, demo / LLAVA)
    items = await diagnostics_of(client, uri)
    assert members(items) == EXPECTED
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=items[0].range.start))
    assert hover is not None and "get_embed_and_head" in str(hover.contents)


async def test_a_file_in_no_analysable_project_is_reported_once_with_the_fix(neovim, tmp_path: Path):
    """No workers anywhere above, and no installed engine: one showMessage per project, naming the root."""
    package = tmp_path / "mymodels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ("a.py", "b.py"):
        (package / name).write_text("class A:\n    pass\n")
    await initialize(neovim, [])
    open_document(neovim, package / "a.py")
    open_document(neovim, package / "b.py")
    await until(lambda: neovim.messages, "a window/showMessage")
    await neovim.text_document_hover_async(types.HoverParams(  # a request the server answers after both opens
        text_document=types.TextDocumentIdentifier(uri=(package / "b.py").as_uri()), position=types.Position(0, 0)))
    shown = [m.message for m in neovim.messages]
    assert len(shown) == 1, shown
    assert f"Tried the project root {package}" in shown[0]
    assert "no installed 'sglang' package" in shown[0] and "[tool.spec-contract]" in shown[0]
    # Each editor's setting for the interpreter, and the message ends where it should (issue 23, item 7).
    for setting in ("specContract.interpreter (VS Code)", "`cmd` (Neovim)", "spec-contract-eglot-python (Emacs)",
                    "--python (command line)."):
        assert setting in shown[0], shown[0]
    assert shown[0].endswith("--python (command line).")


async def test_baselined_findings_are_hints(neovim, demo: Path):
    import subprocess
    import sys

    baseline = demo / "baseline.json"
    subprocess.run([sys.executable, "-m", "spec_contract", "check", "--no-cache", "--write-baseline", str(baseline)],
                   cwd=demo, check=True, capture_output=True, timeout=120)
    (demo / "pyproject.toml").write_text('[tool.spec-contract]\nbaseline = "baseline.json"\n')
    await initialize(neovim, [demo])
    items = await diagnostics_of(neovim, open_document(neovim, demo / LLAVA))
    assert members(items) == EXPECTED
    assert {d.severity for d in items} == {types.DiagnosticSeverity.Hint}


async def test_a_wrongly_typed_pyproject_key_is_one_message_and_requests_still_answer(neovim, demo: Path):
    """Issue 14, item 11: `entry-class-variable = 5` made every hover fail; now it is named once, and hovers
    answer (with nothing to say) until the pyproject is fixed."""
    (demo / "pyproject.toml").write_text("[tool.spec-contract]\nentry-class-variable = 5\n")
    await initialize(neovim, [demo])
    uri = open_document(neovim, demo / LLAVA)
    await until(lambda: neovim.messages, "a window/showMessage")
    for line in range(3):
        hover = await neovim.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line, 6)))
        assert hover is None
    assert [m.message for m in neovim.messages] == [
        f"spec-contract: cannot analyse demo: {demo / 'pyproject.toml'}: 'entry-class-variable' must be a string, got 5"]


async def initialize_with_no_folder(client) -> None:
    """As VS Code opened on one file: no workspace folders and no root at all (null, not an empty list)."""
    client.init_result = await client.initialize_session(types.InitializeParams(
        capabilities=CLIENTS["vscode-1.139.1"](), workspace_folders=None, root_uri=None, root_path=None,
        client_info=client_info("vscode-1.139.1")))


def progress_ended(client) -> list[str]:
    """The messages of the work-done progresses the server ended."""
    return [r.message or "" for reports in client.progress_reports.values() for r in reports
            if isinstance(r, types.WorkDoneProgressEnd)]


async def test_a_loose_file_in_a_big_folder_with_no_workspace_is_answered_at_once(neovim, demo: Path, tmp_path: Path):
    """Issue 23, item 7: VS Code opened on one scratch file with no folder sat at "indexing" for minutes. The file
    is in no package, so discovery falls back to its folder, analysed whole: here a home-like folder with an
    engine checkout somewhere below and hundreds of other files. The server says why it does not analyse that
    (one message, with the fix) and ends its progress, instead of indexing everything below the file."""
    home = tmp_path / "home"
    shutil.copytree(demo, home / "projects" / "demo")
    tools = home / "tools"
    tools.mkdir()
    for i in range(LOOSE_FOLDER_FILES + 1):
        (tools / f"tool_{i}.py").write_text(f"VALUE = {i}\n")
    scratch = home / "scratch.py"
    scratch.write_text("class Scratch:\n    def __init__(self):\n        self.language_model = None\n")
    await initialize_with_no_folder(neovim)
    open_document(neovim, scratch)
    await until(lambda: neovim.messages, "a window/showMessage saying why the file is not analysed")
    await until(lambda: progress_ended(neovim), "the end of the server's progress")
    shown = [m.message for m in neovim.messages]
    assert len(shown) == 1, shown
    assert "scratch.py is in no package" in shown[0] and f"more than {LOOSE_FOLDER_FILES} Python files" in shown[0]
    assert "open the engine's checkout" in shown[0] and "[tool.spec-contract]" in shown[0], shown[0]
    assert progress_ended(neovim) == ["scratch.py: not analysed (see the message)"]


async def test_a_loose_file_in_a_small_folder_with_no_workspace_is_analysed(neovim, demo: Path):
    """The same with a folder small enough: it is analysed as the file's project (the workers below it give the
    contract), and the progress ends saying so, so a status "indexing" ends though the file has no finding."""
    scratch = demo / "scratch.py"
    scratch.write_text("class Scratch:\n    pass\n")
    await initialize_with_no_folder(neovim)
    uri = open_document(neovim, scratch)
    await until(lambda: progress_ended(neovim), "the end of the server's progress")
    assert progress_ended(neovim) == [f"scratch.py: analysed in the project {demo}"], neovim.messages
    assert not neovim.messages
    assert [d for d in await diagnostics_now(neovim, uri) if d.source == "spec-contract"] == []
