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
from typing import BinaryIO


def read_frame(stream: BinaryIO) -> bytes | None:
    """One message body, or None at end of stream."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return stream.read(length) if length is not None else b""


def pump(source: str, reader: BinaryIO, writer: BinaryIO, out, lock: threading.Lock) -> None:
    while (body := read_frame(reader)) is not None:
        with lock:
            out.write(json.dumps({"source": source, "message": json.loads(body)}) + "\n")
            out.flush()
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        writer.flush()
    writer.close()


def main(argv: list[str]) -> int:
    target, separator, *command = argv
    assert separator == "--", "usage: recording_proxy.py OUT.jsonl -- SERVER COMMAND..."
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
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
