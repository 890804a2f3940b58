"""Replay recorded editor sessions (``protocol-fixtures/*.jsonl``) against the server and compare its side.

The recordings are real sessions captured with ``lsp-devtools agent`` + ``lsp-devtools record`` (see
``protocol-fixtures/record.py``). Replaying one:

- the demo workspace is copied to a fresh directory and every recorded ``file://`` root (and path) in the
  client's messages is rewritten to it; ``processId`` becomes this process (the recorded one is long gone);
- client requests and notifications are sent in the recorded order; before each one the replayer waits until
  the server has sent what it had sent by that point in the recording, so edits land in the same state;
- requests the *server* makes (configuration, progress, registrations, refresh) are answered with the
  recorded client response to the same method's n-th request;
- the server's side is compared after normalising ids, roots, uuids and resultIds: each response to its
  request, and per stream (method, and document or progress token) the ordered notifications. Log messages
  are for people and carry timings: they are not compared.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from framing import frame, read_message_async

REPO = Path(__file__).resolve().parents[1]
FIXTURES = sorted((REPO / "protocol-fixtures").glob("*.jsonl"))
SERVER = [sys.executable, "-m", "spec_contract", "serve", "--stdio"]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NOT_COMPARED = {"window/logMessage"}
WAIT = 20.0


def load(path: Path) -> list[tuple[str, dict]]:
    session = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            session.append((record["source"].upper(), record["message"]))
    return session


def recorded_root(session) -> str:
    for source, message in session:
        if source == "CLIENT" and message.get("method") == "initialize":
            params = message["params"]
            folders = params.get("workspaceFolders") or []
            return folders[0]["uri"] if folders else params["rootUri"]
    raise AssertionError("the recording has no initialize request")


def key(message: dict, root_uri: str) -> str:
    """What a server message is, for counting and grouping: its method (and stream), or the request it answers."""
    method = message.get("method")
    if method is None:
        return f"response:{message.get('id')}"
    params = message.get("params") or {}
    if method == "textDocument/publishDiagnostics":
        return f"{method}:{str(params.get('uri')).replace(root_uri.rstrip('/'), '<ROOT>')}"
    if method == "$/progress":
        return f"{method}:{UUID.sub('<uuid>', str(params.get('token')))}"
    return method


class Normaliser:
    """Roots → ``<ROOT>``, uuids → ``<uuid>``, resultIds → ``<result-n>`` in order of first appearance."""

    def __init__(self, root_uri: str) -> None:
        self.root_uri = root_uri.rstrip("/")
        self.root_path = self.root_uri.removeprefix("file://")
        self.result_ids: dict[str, str] = {}

    def __call__(self, value: Any) -> Any:
        text = json.dumps(value, sort_keys=True)
        text = text.replace(self.root_uri, "<ROOT>").replace(self.root_path, "<ROOT>")
        return self._result_ids(json.loads(UUID.sub("<uuid>", text)))

    def _result_ids(self, value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if k in ("resultId", "previousResultId") and isinstance(v, str):
                    v = self.result_ids.setdefault(v, f"<result-{len(self.result_ids)}>")
                out[k] = self._result_ids(v)
            return out
        if isinstance(value, list):
            return [self._result_ids(v) for v in value]
        return value


async def replay(session, new_root: Path) -> list[dict]:
    """Play the client's side of ``session`` against a live server; return everything the server sent."""
    old_uri = recorded_root(session).rstrip("/")
    old_path = old_uri.removeprefix("file://")
    new_uri = new_root.as_uri()

    # Recorded answers to the server's requests, by (method, n-th request of that method).
    methods_by_id: dict[Any, str] = {}
    answers: dict[tuple[str, int], dict] = {}
    seen: Counter = Counter()
    for source, message in session:
        if source == "SERVER" and "method" in message and "id" in message:
            methods_by_id[message["id"]] = message["method"]
        elif source == "CLIENT" and "method" not in message and message.get("id") in methods_by_id:
            method = methods_by_id[message["id"]]
            answers[(method, seen[method])] = message
            seen[method] += 1

    process = await asyncio.create_subprocess_exec(
        *SERVER, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=new_root
    )
    assert process.stdin is not None and process.stdout is not None  # both are pipes
    to_server, from_server = process.stdin, process.stdout
    received: list[dict] = []
    live_counts: Counter = Counter()
    asked: Counter = Counter()
    changed = asyncio.Event()

    async def read_loop() -> None:
        while (message := await read_message_async(from_server)) is not None:
            if "method" in message and "id" in message:  # a request from the server: answer as recorded
                method = message["method"]
                answer = answers.get((method, asked[method]), {"result": None})
                asked[method] += 1
                reply = {"id": message["id"]}
                reply.update({k: v for k, v in answer.items() if k in ("result", "error")})
                to_server.write(frame(reply))
                await to_server.drain()
            received.append(message)
            live_counts[key(message, new_uri)] += 1
            changed.set()

    reader = asyncio.create_task(read_loop())
    expected: Counter = Counter()
    try:
        for source, message in session:
            if source == "SERVER":
                expected[key(message, old_uri)] += 1
                continue
            if "method" not in message:
                continue  # responses to the server's requests are sent by read_loop, with live ids
            deadline = time.monotonic() + WAIT
            while any(live_counts[k] < n for k, n in expected.items()) and time.monotonic() < deadline:
                changed.clear()
                try:
                    await asyncio.wait_for(changed.wait(), timeout=max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    break
            text = json.dumps(message).replace(old_uri, new_uri).replace(old_path, str(new_root))
            outgoing = json.loads(text)
            if outgoing.get("method") == "initialize":
                outgoing["params"]["processId"] = os.getpid()
            to_server.write(frame(outgoing))
            await to_server.drain()
        await asyncio.wait_for(process.wait(), timeout=WAIT)
        await asyncio.wait_for(reader, timeout=WAIT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        reader.cancel()
    return received


def streams(messages: list[dict], normalise: Normaliser) -> dict[str, list]:
    """Server messages grouped by stream, each in order, normalised; requests and responses by position."""
    grouped: dict[str, list] = defaultdict(list)
    for message in messages:
        if message.get("method") in NOT_COMPARED:
            continue
        body = {k: v for k, v in message.items() if k not in ("id", "jsonrpc")}
        grouped[key(message, normalise.root_uri)].append(normalise(body))
    return dict(grouped)


def scenario_ids() -> list[str]:
    return [f.stem for f in FIXTURES]


def test_fixtures_are_present():
    assert len(FIXTURES) >= 5, "protocol-fixtures/*.jsonl are missing; run protocol-fixtures/record.py"


@pytest.mark.parametrize("fixture", FIXTURES, ids=scenario_ids())
async def test_replay_matches_the_recording(fixture: Path, tmp_path: Path):
    session = load(fixture)
    root = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", root, ignore=shutil.ignore_patterns("__pycache__"))
    live = await replay(session, root)
    recorded = streams([m for s, m in session if s == "SERVER"], Normaliser(recorded_root(session)))
    actual = streams(live, Normaliser(root.as_uri()))
    assert sorted(actual) == sorted(recorded), "different kinds of server messages"
    for stream in recorded:
        assert actual[stream] == recorded[stream], f"server stream {stream} differs"
