"""Hostile workspace (issue 14, item 6): opening a project must never run its code.

Every shipped client starts the server with the project as its working directory. ``python -m`` puts that
directory first on ``sys.path``, so a project holding ``spec_contract.py``, ``argparse.py``, ``typing.py``,
``runpy.py`` (imported by ``-m`` itself on 3.10), ``multiprocessing.py`` (imported first thing by the fork server
the engine starts for large trees), … ran those files as soon as a Python file was opened. Here each client's
exact command line (read from the shipped configuration, only the interpreter swapped for this one) starts the
server in such a workspace: diagnostics must arrive and no marker file may appear. The real editors run the same
commands in the same kind of workspace in tests/editors and tests/vscode.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from framing import RawServer
from hostile_workspace import SHADOWS, plant_markers, ran

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo"
WRAPPER = "minisgl/models/llava.py"

PADDING = 100  # model files: past two processes' worth (parallel.MIN_PER_PROCESS), so the cold scan starts workers


def hostile_demo(tmp: Path) -> tuple[Path, Path]:
    """A copy of the demo with marker modules at its root and enough files to make the engine start workers."""
    workspace = tmp / "demo"
    shutil.copytree(DEMO, workspace, ignore=shutil.ignore_patterns("__pycache__", ".spec-contract-cache"))
    padding = workspace / "minisgl" / "models" / "padding"  # registered models: files the cold run scans ahead
    padding.mkdir()
    for i in range(PADDING):
        (padding / f"model_{i}.py").write_text(f"class Model{i}:\n    def forward(self):\n        return {i}\n\n\n"
                                               f"EntryClass = Model{i}\n")
    markers = tmp / "markers"
    plant_markers(workspace, markers)
    return workspace, markers


# -- the clients' command lines, read from what ships ---------------------------------------------------------
def _lua_strings(text: str) -> list[str]:
    return re.findall(r"'([^']*)'", text)


def neovim_config_argv() -> list[str]:
    source = (REPO / "editors" / "neovim" / "lsp" / "spec_contract.lua").read_text()
    (cmd,) = re.findall(r"^\s*cmd = \{([^}]*)\}", source, re.MULTILINE)
    return _lua_strings(cmd)


def neovim_readme_argv() -> list[str]:
    readme = (REPO / "editors" / "neovim" / "README.md").read_text()
    snippet = readme.split("## Neovim 0.7 to 0.10", 1)[1].split("```lua\n", 1)[1].split("```", 1)[0]
    (cmd,) = re.findall(r"cmd = \{([^}]*)\}", snippet)
    return _lua_strings(cmd)


def eglot_argv() -> list[str]:
    source = (REPO / "editors" / "emacs" / "spec-contract-eglot.el").read_text()
    (args,) = re.findall(r"\(list spec-contract-eglot-python((?:\s+\"[^\"]*\")+)\)", source)
    return ["python3", *re.findall(r'"([^"]*)"', args)]


def _vscode_constants() -> dict[str, str]:
    source = (REPO / "vscode-client" / "src" / "python.ts").read_text()
    return dict(re.findall(r"export const (\w+) = '([^']*)';", source))


def _vscode_items(items: str) -> list[str]:
    constants = _vscode_constants()
    return [constants[item] if item in constants else item.strip("'") for item in re.split(r",\s*", items.strip())]


def _vscode_server_argv(launched: str) -> list[str]:
    """server.ts's command for the interpreter whose arguments hold ``launched``; vscode-languageclient appends
    --stdio to it."""
    source = (REPO / "vscode-client" / "src" / "server.ts").read_text()
    (items,) = [items for items in re.findall(
        r"return \{ command: interpreter\.path, args: \[(.*), \.\.\.settings\.args\] \}", source) if launched in items]
    return ["python3", *_vscode_items(items), "--stdio"]


def vscode_argv() -> list[str]:
    """The spec-contract installed in the interpreter's environment (importStrategy fromEnvironment)."""
    return _vscode_server_argv("'-m'")


def vscode_bundled_argv() -> list[str]:
    """The server the .vsix carries (the default), its launcher taken from the repository: without a built
    bundle (bundled/libs) it serves the spec-contract this interpreter has, through the same sys.path set-up."""
    launcher = str(REPO / "vscode-client" / "bundled" / "tool" / "server.py")
    return [launcher if item == "BUNDLED_SERVER" else item for item in _vscode_server_argv("BUNDLED_SERVER")]


def vscode_check_argv() -> list[str]:
    """python.ts's import check, run before every start."""
    source = (REPO / "vscode-client" / "src" / "python.ts").read_text()
    (items,) = re.findall(r"execFile\(python, \[\.\.\.flags, (.*?)\]", source)
    return ["python3", _vscode_constants()["ISOLATED"], *_vscode_items(items)]


CLIENTS = {
    "neovim lsp/spec_contract.lua": neovim_config_argv,
    "neovim README snippet": neovim_readme_argv,
    "eglot contact": eglot_argv,
    "vscode server.ts": vscode_argv,
    "vscode server.ts bundled": vscode_bundled_argv,
}


def with_this_python(argv: list[str]) -> list[str]:
    assert argv[0] == "python3", argv
    return [sys.executable, *argv[1:]]


def assert_serves_without_running_workspace_code(argv: list[str], workspace: Path, markers: Path) -> None:
    # an empty cache of its own: a warm run (same padding files, same engine) would start no helper processes
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(markers.parent / "cache")}
    with RawServer(argv, cwd=workspace, env=env) as server:
        server.initialize(workspace)
        uri = (workspace / WRAPPER).as_uri()
        published = server.wait_for(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            and any(d.get("code") == "SC001" for d in m["params"]["diagnostics"]),
            "SC001 diagnostics for the wrapper",
        )
        assert published
        assert "result" in server.call("shutdown")
        server.notify("exit")
        assert server.exit_code() == 0
    assert ran(markers) == []


@pytest.mark.parametrize("client", list(CLIENTS))
def test_each_client_command_line_serves_a_hostile_workspace_without_running_it(client, tmp_path):
    argv = CLIENTS[client]()
    assert "-I" in argv, f"{client} starts the server without -I: {argv}"
    workspace, markers = hostile_demo(tmp_path)
    assert_serves_without_running_workspace_code(with_this_python(argv), workspace, markers)


def test_the_vscode_import_check_runs_nothing_of_the_workspace(tmp_path):
    workspace, markers = hostile_demo(tmp_path)
    check = subprocess.run(with_this_python(vscode_check_argv()), cwd=workspace, capture_output=True,
                                         timeout=120)
    assert check.returncode == 0, check.stderr
    assert ran(markers) == []


def test_the_markers_catch_a_plain_python_m(tmp_path):
    """The workspace is hostile enough to tell: the old command line (no -I) imports workspace code at once.
    Which planted module runs first depends on the interpreter (a venv's start-up imports importlib before -m
    looks for spec_contract, the system Python's does not), so the test asserts what the markers are for: some
    planted module ran, it is one of ours, and its failed import is what stopped the server."""
    workspace, markers = hostile_demo(tmp_path)
    started = subprocess.run([sys.executable, "-m", "spec_contract", "serve"], cwd=workspace,
                                           input=b"", capture_output=True, timeout=120)
    assert started.returncode != 0
    fired = ran(markers)
    assert fired and set(fired) <= set(SHADOWS), fired
    assert any(f"the workspace module {name} was imported" in started.stderr.decode() for name in fired), started.stderr


def test_an_out_of_tree_package_looks_up_the_engine_without_running_the_workspace(tmp_path):
    """A models-only package makes the server look up the engine installed in the environment: that must not
    import from the workspace either."""
    workspace = tmp_path / "my_models"
    (workspace / "my_models").mkdir(parents=True)
    (workspace / "my_models" / "__init__.py").write_text("")
    (workspace / "my_models" / "wrapper.py").write_text(
        "class MyWrapper:\n    def __init__(self):\n        self.language_model = None\n"
    )
    markers = tmp_path / "markers"
    plant_markers(workspace, markers)
    with RawServer(with_this_python(vscode_argv()), cwd=workspace) as server:
        server.initialize(workspace)
        params = {"textDocument": {"uri": (workspace / "my_models" / "wrapper.py").as_uri()},
                  "position": {"line": 0, "character": 7}}
        assert "id" in server.call("textDocument/hover", params)  # answered once the folder was analysed
    assert ran(markers) == []
