"""``spec-contract serve`` as editors start it: the console script with ``--stdio`` appended."""

from __future__ import annotations

import json
import subprocess
import sys


def _frame(message: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_serve_with_stdio_flag_answers_initialize_and_exits_on_exit() -> None:
    messages = [
        {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"method": "initialized", "params": {}},
        {"id": 2, "method": "shutdown", "params": None},
        {"method": "exit", "params": None},
    ]
    result = subprocess.run([sys.executable, "-m", "spec_contract", "serve", "--stdio"],
                            input=b"".join(_frame(m) for m in messages), capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    assert '"id": 1' in out and '"capabilities"' in out and '"name": "spec-contract"' in out
