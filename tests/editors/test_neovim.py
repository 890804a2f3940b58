"""Neovim, headless, against the real server: Debian's 0.7.2 through vim.lsp.start_client, and 0.11 through
the shipped editors/neovim/lsp/spec_contract.lua and vim.lsp.enable."""

from pathlib import Path

import pytest

DRIVER = Path(__file__).with_name("nvim_e2e.lua")


@pytest.mark.parametrize("editor", ["debian_neovim", "pypi_neovim"])
def test_neovim_shows_and_fixes_the_missing_forward(editor, request, demo_workspace, run_session, check_session):
    nvim = request.getfixturevalue(editor)
    session = run_session([str(nvim.binary), "--headless", "-i", "NONE", "-u", str(DRIVER)], demo_workspace)
    print(f"{nvim.version}: {session.seconds:.1f} s, offset encoding {session.report.get('offset_encoding')}")
    check_session(session, demo_workspace)
    expected_mode = "vim.lsp.enable" if session.report["version"]["minor"] >= 11 else "vim.lsp.start_client"
    assert session.report["mode"] == expected_mode
