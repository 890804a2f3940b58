"""``spec-contract serve`` as editors start it: the console script, or ``python -I -m spec_contract``, with
``--stdio`` appended."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from framing import SERVER, frame

# pip puts the script next to the interpreter (or, for a user install, somewhere on PATH)
BESIDE = Path(sys.executable).with_name("spec-contract")
CONSOLE_SCRIPT = str(BESIDE) if BESIDE.is_file() else shutil.which("spec-contract") or str(BESIDE)


@pytest.mark.parametrize("command", [SERVER, [CONSOLE_SCRIPT, "serve", "--stdio"]], ids=["python -I -m", "console script"])
def test_serve_answers_initialize_and_exits_0_after_shutdown(command) -> None:
    messages = [
        {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"method": "initialized", "params": {}},
        {"id": 2, "method": "shutdown", "params": None},
        {"method": "exit", "params": None},
    ]
    result = subprocess.run(command, input=b"".join(frame(m) for m in messages), capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    assert '"id": 1' in out and '"capabilities"' in out and '"name": "spec-contract"' in out
