"""Timing the language server from outside: start-up, first diagnostics, edit latency, peak memory.

The client declares pull diagnostics (``textDocument.diagnostic`` + ``workspace.diagnostics.refreshSupport``,
the pair the server needs before it pulls) and asks ``textDocument/diagnostic`` after each step. Push would
not do: the server publishes only when a file's diagnostics *change*, so a comment edit in a file without
findings produces no notification at all to wait for. A pull request applies pending edits at once
(``Session.fresh`` in ``spec_contract/lsp/session.py``), so the debounce does not enter the edit latency; it is set to 0 through
``initializationOptions`` anyway and reported on its own line.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from check_runs import THIS, Build, env_with_cache
from lsp_client import LspClient

CAPABILITIES = {
    "textDocument": {
        "synchronization": {"dynamicRegistration": False, "didSave": True},
        "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False},
        "publishDiagnostics": {"relatedInformation": True},
    },
    "workspace": {"diagnostics": {"refreshSupport": True}, "workspaceFolders": True},
}


def initialize_params(tree: Path, debounce_ms: int | None) -> dict:
    options = {"specContract": {"debounce": debounce_ms}} if debounce_ms is not None else None
    return {
        "processId": None,
        "rootUri": tree.as_uri(),
        "workspaceFolders": [{"uri": tree.as_uri(), "name": tree.name}],
        "capabilities": CAPABILITIES,
        "initializationOptions": options,
    }


def time_start(tree: Path, cache_dir: str, timeout: float, build: Build = THIS) -> float:
    """Seconds from spawning the server to the ``initialize`` result (no folder gets indexed)."""
    client = LspClient(build.command("serve"), env=env_with_cache(cache_dir, build))
    try:
        _, answered, _ = client.request("initialize", initialize_params(tree, None), timeout)
        return answered - client.started
    finally:
        client.close()


def time_python(code: str, timeout: float, python: str = sys.executable) -> float:
    """Wall seconds of an interpreter running ``code`` and exiting: ``import pygls.lsp.server`` is the floor
    for the server's start-up, ``pass`` the floor for any tool's."""
    started = time.perf_counter()
    subprocess.run([python, "-c", code], check=True, timeout=timeout)
    return time.perf_counter() - started


@dataclass
class Session:
    initialize: float = 0.0  # spawn → initialize result
    first_diagnostics: float = 0.0  # initialize result → diagnostics of the opened file
    first_count: int = 0  # how many diagnostics that file got
    edits: list[float] = field(default_factory=list)  # didChange → diagnostics, per edit in a comment
    newline_edits: list[float] = field(default_factory=list)  # the same, per new line
    peak_rss_kb: int | None = None


def _open(client: LspClient, path: Path, text: str, timeout: float) -> tuple[float, list]:
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}},
    )
    _, answered, report = client.request("textDocument/diagnostic", {"textDocument": {"uri": path.as_uri()}}, timeout)
    return answered, report.get("items", []) if isinstance(report, dict) else []


def edited_texts(text: str, count: int) -> list[str]:
    """``count`` successive buffer states, each one character longer inside a comment line (the line count
    stays: only the statement holding the comment changes)."""
    lines = text.splitlines(keepends=True)
    index = next((i for i, line in enumerate(lines) if line.lstrip().startswith("#")), None)
    if index is None:
        lines.append("\n#" if lines and not lines[-1].endswith("\n") else "#")
        index = len(lines) - 1
    line = lines[index]
    body, newline = (line[:-1], "\n") if line.endswith("\n") else (line, "")
    return ["".join(lines[:index] + [body + "x" * n + newline] + lines[index + 1 :]) for n in range(1, count + 1)]


def newline_texts(text: str, count: int) -> list[str]:
    """``count`` successive buffer states, each with one more blank line (a keystroke of Enter), the new lines
    spread from the top of the file to the bottom: every statement below each one moves.

    A blank line is valid anywhere except after a backslash continuation, so those places are skipped.
    """
    lines = text.splitlines(keepends=True)
    places = [i for i in range(1, len(lines)) if not lines[i - 1].rstrip("\r\n").endswith("\\")]
    states = []
    for n in range(count):
        at = places[(n * len(places)) // count] + n  # the blank lines already inserted above it shift it down
        lines.insert(at, "\n")
        states.append("".join(lines))
    return states


def run_session(
    tree: Path, cache_dir: str, open_file: Path, edit_file: Path | None, edits: int, timeout: float,
    build: Build = THIS,
) -> Session:
    """One server: initialize, open ``open_file`` and pull its diagnostics, then time ``edits`` edits."""
    session = Session()
    client = LspClient(build.command("serve"), env=env_with_cache(cache_dir, build))
    try:
        _, answered, _ = client.request("initialize", initialize_params(tree, 0), timeout)
        session.initialize = answered - client.started
        client.notify("initialized", {})
        first_at, items = _open(client, open_file, open_file.read_text(encoding="utf-8"), timeout)
        session.first_diagnostics = first_at - answered
        session.first_count = len(items)
        if edit_file is not None and edits > 0:
            text = edit_file.read_text(encoding="utf-8")
            if edit_file != open_file:
                _open(client, edit_file, text, timeout)
            uri = edit_file.as_uri()
            comment_edits = edited_texts(text, edits)
            series = [(comment_edits, session.edits), (newline_texts(comment_edits[-1], edits), session.newline_edits)]
            version = 1
            for texts, times in series:
                for new_text in texts:
                    version += 1
                    sent = client.notify(
                        "textDocument/didChange",
                        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": new_text}]},
                    )
                    _, answered, _ = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}},
                                                    timeout)
                    times.append(answered - sent)
        session.peak_rss_kb = client.peak_rss_kb()
    finally:
        client.close()
    return session


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (p95 of 100 samples is the 95th smallest)."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]
