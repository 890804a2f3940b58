"""Start-up, capabilities per client, settings problems, and exiting when orphaned.

Malformed input and lifecycle-order violations are in tests/reliability/test_protocol_abuse.py.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

from framing import SERVER, frame, frame_body, header, initialize_params, read_message
from lsp_harness import ENCODINGS, initialize, until
from lsprotocol import types


async def test_capabilities_follow_the_client(client, demo):
    result = await initialize(client, [demo])
    caps = result.capabilities
    assert result.server_info.name == "spec-contract"
    assert caps.position_encoding == ENCODINGS[client.editor]
    if client.editor == "vscode-1.139.1":
        assert caps.diagnostic_provider == types.DiagnosticOptions(
            inter_file_dependencies=True, workspace_diagnostics=True, identifier="spec-contract"
        )
    else:  # no workspace/diagnostic/refresh support: cross-file updates only reach them by push
        assert caps.diagnostic_provider is None
    assert caps.code_action_provider.resolve_provider is (client.editor != "emacs-29.1")
    assert set(caps.code_action_provider.code_action_kinds) == {"quickfix", "source", "source.fixAll", "source.fixAll.spec-contract"}
    assert caps.hover_provider and caps.implementation_provider
    assert caps.workspace.workspace_folders.supported and caps.workspace.workspace_folders.change_notifications
    if client.editor == "neovim-0.11":  # no dynamic registration of file watchers there
        assert client.registrations == []
    else:
        (registration,) = await until(lambda: client.registrations, "the file watcher registration")
        assert registration.method == "workspace/didChangeWatchedFiles"
        globs = sorted(w["globPattern"] for w in registration.register_options["watchers"])
        assert globs == ["**/*.py", "**/pyproject.toml"]


async def test_invalid_initialization_options_are_shown_and_defaults_used(client, demo):
    await initialize(client, [demo], {"specContract": {"debounce": "soon", "severity": {"SC001": "loud"}}})
    message = await until(
        lambda: next((m for m in client.messages if "specContract.debounce" in m.message), None),
        "a showMessage about the bad setting",
    )
    assert message.type == types.MessageType.Warning
    assert "specContract.severity.SC001" in message.message and "using 150" in message.message


async def test_invalid_workspace_configuration_is_shown(neovim, demo):
    neovim.set_configuration({"enable": "sometimes"}, section="specContract", scope_uri=demo.as_uri())
    await initialize(neovim, [demo])
    message = await until(
        lambda: next((m for m in neovim.messages if "specContract.enable" in m.message), None),
        "a showMessage about specContract.enable",
    )
    assert message.type == types.MessageType.Warning


def _initialize(process_id: int | None, root) -> bytes:
    return frame({"id": 1, "method": "initialize", "params": initialize_params(root, process_id)}) + frame(
        {"method": "initialized", "params": {}}
    )


def test_exits_when_stdin_closes(demo):
    server = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server.stdin.write(_initialize(None, demo))
    server.stdin.close()
    try:
        assert server.wait(timeout=30) is not None
    finally:
        server.kill()


def test_exits_when_the_client_process_dies(demo):
    editor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    server = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        server.stdin.write(_initialize(editor.pid, demo))
        server.stdin.flush()  # stdin stays open: only the parent's death can end the server
        editor.kill()
        editor.wait()
        assert server.wait(timeout=30) == 0
    finally:
        server.kill()
        editor.kill()


def test_tcp_transport_serves_a_session(demo):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([*SERVER, "--tcp", "--host", "127.0.0.1", "--port", str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                connection = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.05)
        with connection, connection.makefile("rb") as incoming:
            connection.sendall(_initialize(None, demo))
            message = read_message(incoming)
            while message.get("id") != 1:
                message = read_message(incoming)
            assert message["result"]["serverInfo"]["name"] == "spec-contract"
            # The same guarded reader as on stdio: a length that kills pygls's own loop costs only that frame.
            connection.sendall(header(10**15) + b"{}" + frame({"id": 2, "method": "shutdown"}))
            message = read_message(incoming)
            while message.get("id") != 2:
                message = read_message(incoming)
            assert message["result"] is None
            connection.sendall(frame({"method": "exit"}))
        assert server.wait(timeout=90) == 0  # it ends with its client
    finally:
        server.kill()
        server.wait()


STRAY_WRITES = """
import subprocess, sys
from spec_contract.lsp.server import _protocol_streams

stdin, stdout = _protocol_streams()
print("a careless print")
subprocess.run([sys.executable, "-c", "print('a child process writing to its standard output')"], check=True)
stdout.write(b"Content-Length: 2\\r\\n\\r\\n{}")
stdout.flush()
print("read:", stdin.read(), file=sys.stderr)
"""


def test_the_protocol_streams_leave_standard_output_to_the_log():
    # Whatever else writes to file descriptor 1, in the server or in a process it starts, lands in the log
    # (standard error) and not in the JSON-RPC stream.
    run = subprocess.run([sys.executable, "-c", STRAY_WRITES], input=b"request bytes", capture_output=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == frame_body(b"{}")
    log = run.stderr.decode()
    assert "a careless print" in log and "a child process writing" in log and "read: b'request bytes'" in log
