"""End-to-end harness: the real server in a subprocess, driven by pytest-lsp as three different editors.

Each test gets its own copy of ``examples/demo`` (edits go to a temporary directory) and a client whose
capabilities are those of Neovim 0.11, Emacs 29 (eglot) or VS Code 1.139, so the same scenario runs through
the pull and push diagnostic paths, lazy and eager code-action edits, ``changes`` and ``documentChanges``,
and the utf-8, utf-16 and utf-32 position encodings.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsp_harness import CLIENTS, as_editor, make_client
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo"
SERVER_COMMAND = [sys.executable, "-I", "-m", "spec_contract", "serve", "--stdio"]  # -I: as the editors start it
if record_to := os.environ.get("SPEC_CONTRACT_RECORD"):  # protocol-fixtures/record.py: capture the session
    SERVER_COMMAND = [sys.executable, str(Path(__file__).with_name("recording_proxy.py")), record_to, "--", *SERVER_COMMAND]


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A private copy of the demo workspace."""
    target = tmp_path / "demo"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("__pycache__", ".spec-contract-cache"))
    return target


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client),
    params=list(CLIENTS),
)
async def client(lsp_client: LanguageClient, request):
    """A started server and a client that pretends to be one of the editors (not yet initialised)."""
    async for started in as_editor(lsp_client, request.param):
        yield started


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client))
async def neovim(lsp_client: LanguageClient):
    """A Neovim 0.11 client only: for scenarios whose point is one client's behaviour."""
    async for started in as_editor(lsp_client, "neovim-0.11"):
        yield started
