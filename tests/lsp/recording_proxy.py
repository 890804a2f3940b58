"""A stdio proxy that records an LSP session as JSONL: ``python recording_proxy.py OUT.jsonl -- SERVER...``.

Each message becomes one line ``{"source": "CLIENT"|"SERVER", "message": {...}}``, the format
``lsp-devtools record`` writes. lsp-devtools' agent did record here, but it never exited after the session
(so pytest-lsp's teardown hung); this proxy does the same job with two threads and exits with the server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

# Run as a script (tests/lsp/conftest.py starts it in front of the server), so tests/ is not on sys.path as it
# is under pytest: put it there for the shared framing helper.
sys.path.append(str(Path(__file__).resolve().parents[1]))
from framing import frame_body, read_body  # noqa: E402


def pump(source: str, reader: IO[bytes], writer: IO[bytes], out: IO[str], lock: threading.Lock) -> None:
    """Forwards each frame's body unchanged, recording it first; closes ``writer`` when ``reader`` ends."""
    while (body := read_body(reader)) is not None:
        with lock:
            out.write(json.dumps({"source": source, "message": json.loads(body)}) + "\n")
            out.flush()
        writer.write(frame_body(body))
        writer.flush()
    writer.close()


def main(argv: list[str]) -> int:
    target, separator, *command = argv
    assert separator == "--", "usage: recording_proxy.py OUT.jsonl -- SERVER COMMAND..."
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None  # both are pipes
    lock = threading.Lock()
    with open(target, "w", encoding="utf-8") as out:
        to_server = threading.Thread(
            target=pump, args=("CLIENT", sys.stdin.buffer, server.stdin, out, lock), daemon=True
        )
        to_server.start()
        pump("SERVER", server.stdout, sys.stdout.buffer, out, lock)
    return server.wait()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
