"""The extension in an untrusted workspace (issue 38, item 12), in real VS Code (code-server + Chromium) with
workspace trust on and no folder trusted: like the language server, "spec-contract: Show support matrix" runs
no Python interpreter there, and says why."""

from __future__ import annotations

import sys

from hostile_workspace import ran
from vscode_harness import running_code_server


def test_show_support_matrix_runs_no_interpreter_in_an_untrusted_workspace(tmp_path):
    marker = tmp_path / "interpreter-ran"
    python = tmp_path / "python-leaving-a-marker"  # the user settings' interpreter, which the command would run
    python.write_text(f'#!/bin/sh\ntouch {marker}\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    with running_code_server(tmp_path, trusted=False, user_settings={"specContract.interpreter": str(python)}) as server:
        seen = server.drive("ui-untrusted-matrix", url=server.open_url(server.ui_workspace),
                            toast="does not make the support matrix")
        assert seen["tab"] is False, f"the matrix was made in an untrusted workspace\n{server.logs()}"
        assert "in an untrusted workspace" in seen["notification"], seen
        assert "Manage Workspace Trust" in seen["buttons"], seen
        assert not marker.exists(), "the interpreter ran"
        assert ran(server.markers) == []
