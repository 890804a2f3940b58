"""Protocol abuse (issue 14, item 12): the real server over raw stdio, fed what no correct client sends.

Every case ends in an error response or is ignored, and a valid hover on the demo's wrapper class is answered
right after it: a broken frame, a bad message or an order violation costs at most that one message, never the
connection. Framing and message cases share one server (each must leave it usable for the next); lifecycle
cases need a server of their own.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from framing import RawServer, frame, header, message_body
from spec_contract.lsp.framing import LINE_LIMIT, FrameReader

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo"
WRAPPER = "minisgl/models/llava.py"
WORKER = "minisgl/speculative/eagle_worker.py"  # the hover on the wrapper names the worker that calls it

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SERVER_NOT_INITIALIZED, REQUEST_CANCELLED = -32002, -32800


def copy_demo(tmp: Path) -> Path:
    root = tmp / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", ".spec-contract-cache"))
    return root


def hover_params(root: Path) -> dict:
    """The position of the wrapper's class name, where the hover lists the contract and its call sites."""
    lines = (root / WRAPPER).read_text().splitlines()
    line = next(i for i, text in enumerate(lines) if text.startswith("class "))
    return {"textDocument": {"uri": (root / WRAPPER).as_uri()}, "position": {"line": line, "character": 8}}


def assert_hover_answered(server: RawServer, root: Path, request_id: int | None = None) -> None:
    """The hover on the wrapper (sent now, or already as ``request_id``) is answered with its contract."""
    answer = server.response(request_id) if request_id is not None else server.call("textDocument/hover",
                                                                                      hover_params(root))
    assert "error" not in answer, answer
    assert WORKER in json.dumps(answer["result"]), answer


body_of = message_body


@dataclass
class Case:
    """Bytes to send (built from the hover params of the workspace) and what must come back.

    ``expect``: ``None`` when the input must be ignored (no response at all), else ``(id, code)`` of the one
    response that must come, ``code`` None for a result (or any answer where either is correct).
    """

    name: str
    data: Callable[[dict], bytes]
    expect: tuple[Any, int | None] | None
    any_answer: bool = False  # for ``expect``: a result or an error are both correct answers


def _hover(request_id: Any, params: Any) -> dict:
    return {"id": request_id, "method": "textDocument/hover", "params": params}


def _with_length(length: bytes | int, body: bytes, name: bytes = b"Content-Length") -> bytes:
    """A frame that may lie: the shared header for a numeric length, spelled by hand for anything else."""
    if isinstance(length, int) and name == b"Content-Length":
        return header(length) + body
    return name + b": " + (str(length).encode() if isinstance(length, int) else length) + b"\r\n\r\n" + body


FRAMING = [
    Case("length 10**15", lambda p: _with_length(10**15, body_of(_hover(1, p))), None),
    Case("length 2**64", lambda p: _with_length(2**64, body_of(_hover(2, p))), None),
    Case("no header", lambda p: body_of(_hover(3, p)), None),
    Case("non-numeric length", lambda p: _with_length(b"twelve", body_of(_hover(4, p))), None),
    Case("negative length", lambda p: _with_length(-40, body_of(_hover(5, p))), None),
    Case("length 10 short", lambda p: _with_length(len(body_of(_hover(6, p))) - 10, body_of(_hover(6, p))),
         (None, PARSE_ERROR)),
    # The complete message is served; the 10 bytes of the next header it swallowed are put back.
    Case("length 10 long", lambda p: _with_length(len(body_of(_hover(7, p))) + 10, body_of(_hover(7, p))),
         (7, None)),
    Case("1 MB of binary garbage", lambda p: bytes(range(256)) * 4096, None),
    Case("1 MB without a line break", lambda p: b"x" * (1 << 20), None),
    Case("a header block without a length", lambda p: b"Content-Type: application/json\r\n\r\n" + body_of(_hover(8, p)),
         None),
    Case("length 0", lambda p: _with_length(0, b""), (None, PARSE_ERROR)),
    Case("a body that is not JSON", lambda p: _with_length(5, b"{{{{{"), (None, PARSE_ERROR)),
    Case("a body that is not UTF-8", lambda p: _with_length(4, b"\xff\xfe\xfd\xfc"), (None, PARSE_ERROR)),
    Case("JSON nested 100,000 deep", lambda p: _with_length(200_000, b"[" * 100_000 + b"]" * 100_000),
         (None, PARSE_ERROR)),
    # Accepted spellings: the header name in any case, spaces, Content-Type first, bare \n line ends.
    Case("lower-case header", lambda p: _with_length(len(body_of(_hover(9, p))), body_of(_hover(9, p)),
                                                     b"content-length"), (9, None)),
    Case("Content-Type before the length, bare line feeds",
         lambda p: b"Content-Type: application/vscode-jsonrpc; charset=utf-8\nContent-Length:%d \n\n"
         % len(body_of(_hover(10, p))) + body_of(_hover(10, p)), (10, None)),
]

MESSAGES = [
    Case("a JSON array", lambda p: _with_length(6, b"[1, 2]"), (None, INVALID_REQUEST)),
    Case("a JSON number", lambda p: _with_length(2, b"42"), (None, INVALID_REQUEST)),
    Case("an object that is no message", lambda p: _with_length(9, b'{"a": 1}\n'), (None, INVALID_REQUEST)),
    Case("jsonrpc 1.0", lambda p: frame({**_hover(20, p), "jsonrpc": "1.0"}), (20, INVALID_REQUEST)),
    Case("an object as id", lambda p: frame(_hover({"x": 1}, p)), (None, INVALID_REQUEST)),
    Case("a fractional id", lambda p: frame(_hover(21.5, p)), (None, INVALID_REQUEST)),
    Case("a number as method", lambda p: frame({"id": 22, "method": 5, "params": {}}), (22, INVALID_REQUEST)),
    Case("an unknown method", lambda p: frame({"id": 23, "method": "spec/nothing", "params": {}}),
         (23, METHOD_NOT_FOUND)),
    Case("an unknown notification", lambda p: frame({"method": "spec/nothing", "params": {}}), None),
    Case("params a number", lambda p: frame(_hover(24, 5)), (24, INVALID_PARAMS)),
    Case("params missing", lambda p: frame({"id": 25, "method": "textDocument/hover"}), (25, INVALID_PARAMS)),
    Case("params of the wrong types", lambda p: frame(_hover(26, {"textDocument": 5, "position": "top"})),
         (26, INVALID_PARAMS)),
    Case("a position far past the end", lambda p: frame(_hover(27, {**p, "position": {"line": 10**9, "character": 10**9}})),
         (27, None), any_answer=True),
    Case("a negative position", lambda p: frame(_hover(28, {**p, "position": {"line": -1, "character": -1}})),
         (28, None), any_answer=True),
    Case("a file outside the workspace", lambda p: frame(_hover(29, {**p, "textDocument": {"uri": "file:///nowhere/x.py"}})),
         (29, None), any_answer=True),
    Case("a URI that is no file", lambda p: frame(_hover(30, {**p, "textDocument": {"uri": "not a uri"}})),
         (30, None), any_answer=True),
    Case("a change to a document never opened",
         lambda p: frame({"method": "textDocument/didChange", "params": {
             "textDocument": {"uri": "file:///nowhere/x.py", "version": 2},
             "contentChanges": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 0}},
                                 "text": "x"}]}}), None),
    Case("didOpen with bad params", lambda p: frame({"method": "textDocument/didOpen", "params": {"textDocument": 5}}),
         None),
    Case("a response to nothing", lambda p: frame({"id": 999_999, "result": {"x": 1}}), None),
    Case("cancel of an unknown request", lambda p: frame({"method": "$/cancelRequest", "params": {"id": 123_456}}), None),
    Case("cancel with bad params", lambda p: frame({"method": "$/cancelRequest", "params": {"id": {"x": 1}}}), None),
    Case("cancel right after the request", lambda p: frame(_hover(31, p)) + frame(
        {"method": "$/cancelRequest", "params": {"id": 31}}), (31, REQUEST_CANCELLED), any_answer=True),
]


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One initialised server on a copy of the demo, answering hovers (the cases run in order on it)."""
    root = copy_demo(tmp_path_factory.mktemp("abuse"))
    with RawServer() as server:
        server.initialize(root)
        assert_hover_answered(server, root)
        yield server, root


@pytest.mark.parametrize("case", FRAMING + MESSAGES, ids=lambda c: c.name)
def test_abuse_is_answered_or_ignored_and_the_next_hover_answered(shared, case: Case):
    server, root = shared
    start = len(server.received)
    server.send(case.data(hover_params(root)))
    hover = server.request("textDocument/hover", hover_params(root))  # at once: a wrong length may wait for it
    if case.expect is not None:
        request_id, code = case.expect
        if request_id is None:  # an error with id null
            answer = server.wait_for(lambda m: "method" not in m and m.get("id") is None and "error" in m,
                                     "an error response with id null", start=start)
        else:
            answer = server.response(request_id)
        if case.any_answer:
            assert "result" in answer or code is None or answer["error"]["code"] == code, answer
        elif code is None:
            assert "error" not in answer and "result" in answer, answer
        else:
            assert answer["error"]["code"] == code, answer
    assert_hover_answered(server, root, hover)
    responses = [m for m in server.received[start:] if "method" not in m]
    # Nothing else was answered: the hover, and the expected answer when there is one.
    assert len(responses) == 1 + (case.expect is not None), responses
    logged = [m["params"]["message"] for m in server.received[start:] if m.get("method") == "window/logMessage"]
    assert not [text for text in logged if "Traceback" in text], logged
    assert server.process.poll() is None


@pytest.mark.parametrize("garbage", [LINE_LIMIT - 7, LINE_LIMIT * 3 - 1, LINE_LIMIT * 2])
def test_a_header_glued_to_long_garbage_is_found_wherever_the_pieces_end(garbage):
    """The reader drops over-long lines in pieces; a header split between two pieces must still be found."""
    message = frame({"id": 1, "method": "shutdown"})
    reader = FrameReader(io.BytesIO(b"x" * garbage + message + message))
    first, second = reader.next_frame(), reader.next_frame()
    assert first.skipped == garbage and json.loads(first.body)["method"] == "shutdown"
    assert second.skipped == 0 and second.body == first.body
    assert reader.next_frame() is None


@pytest.mark.parametrize("spaces", [1, 1_000, LINE_LIMIT - 100])
def test_a_length_followed_by_spaces_and_a_stray_byte_is_no_header(spaces):
    """``Content-Length: 5   …   x``: no length (the value is not a number), the line is skipped, and the next
    message is read. The header is read without a backtracking pattern: one that matched a value with spaces
    around it backtracked over every space before the ``x`` (half a minute at 60,000)."""
    message = frame({"id": 1, "method": "shutdown"})
    line = b"Content-Length: 5" + b" " * spaces + b"x\r\n"
    reader = FrameReader(io.BytesIO(line + b"\r\n" + message))
    first = reader.next_frame()
    value = b"5" + b" " * spaces + b"x"
    assert first.body is None and first.problems == [f"Content-Length {value[:40]!r} is not a length",
                                                     "a header block without a usable Content-Length"]
    second = reader.next_frame()
    assert json.loads(second.body)["method"] == "shutdown"


@pytest.mark.parametrize("written", [b"Content-Length: 49", b"content-length:\t 49 \t", b"junk CONTENT-LENGTH :49"])
def test_a_length_in_any_case_with_spaces_around_it_is_read(written):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}).encode()
    assert len(body) == 49
    frame_ = FrameReader(io.BytesIO(written + b"\r\n\r\n" + body)).next_frame()
    assert frame_.body == body and frame_.skipped == written.lower().index(b"content-length")


@pytest.mark.parametrize("tail", [b"", b"x" * 10, b"x" * (LINE_LIMIT + 5), header(9) + b"{}"],
                         ids=["nothing", "a few bytes", "a long line", "half a body"])
def test_the_reader_ends_with_the_stream(tail):
    reader = FrameReader(io.BytesIO(tail))
    assert reader.next_frame() is None


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return copy_demo(tmp_path)


def test_requests_before_initialize_get_server_not_initialized(demo):
    with RawServer() as server:
        early = server.call("textDocument/hover", hover_params(demo))
        assert early["error"]["code"] == SERVER_NOT_INITIALIZED, early
        server.notify("textDocument/didClose", {"textDocument": {"uri": (demo / WRAPPER).as_uri()}})  # dropped
        server.initialize(demo)
        assert_hover_answered(server, demo)


def test_a_second_initialize_is_refused(demo):
    with RawServer() as server:
        server.initialize(demo)
        again = server.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert again["error"]["code"] == INVALID_REQUEST, again
        assert_hover_answered(server, demo)


def test_requests_after_shutdown_are_answered_and_exit_then_ends_with_0(demo):
    with RawServer() as server:
        server.initialize(demo)
        assert_hover_answered(server, demo)
        assert server.call("shutdown") == {"jsonrpc": "2.0", "id": server._next_id, "result": None}
        late = server.call("textDocument/hover", hover_params(demo))
        assert late["error"]["code"] == INVALID_REQUEST, late
        assert server.call("shutdown")["error"]["code"] == INVALID_REQUEST
        server.notify("exit")
        assert server.exit_code() == 0


@pytest.mark.parametrize("initialized", [True, False], ids=["after initialize", "before initialize"])
def test_exit_without_shutdown_ends_with_1(demo, initialized):
    with RawServer() as server:
        if initialized:
            server.initialize(demo)
        server.notify("exit")
        assert server.exit_code() == 1


def test_end_of_input_inside_a_frame_ends_the_server(demo):
    with RawServer() as server:
        server.initialize(demo)
        server.send(header(500) + b'{"jsonrpc"')
        server.close_input()
        assert server.exit_code() in (0, 1)


def test_an_answer_that_comes_after_the_server_stopped_waiting_is_dropped_quietly(demo, tmp_path):
    # A slow client answers workspace/configuration after the server's 10 s wait: the server has gone on
    # with defaults; the late answer must not raise in its reader (pygls's future for it must not have been
    # cancelled) nor stop it answering.
    log = tmp_path / "server.log"
    with open(log, "wb") as stderr, RawServer(stderr=stderr, answer_requests=False) as server:
        server.initialize(demo, capabilities={"workspace": {"configuration": True}})
        asked = server.wait_for(lambda m: m.get("method") == "workspace/configuration", "configuration request")
        server.wait_for(lambda m: m.get("method") == "window/logMessage"
                        and "workspace/configuration failed" in m["params"]["message"], "the wait given up")
        start = len(server.received)
        server.send(frame({"id": asked["id"], "result": [None]}))
        hover = server.request("textDocument/hover", hover_params(demo))
        while (request := next((m for m in server.received[start:] if "method" in m and "id" in m), None)):
            start = server.received.index(request) + 1  # anything else it asks of us now: answered
            server.send(frame({"id": request["id"], "result": None}))
        assert_hover_answered(server, demo, hover)
        assert server.call("shutdown")["result"] is None
        server.notify("exit")
        assert server.exit_code() == 0
        said = json.dumps(server.received)
    assert "InvalidStateError" not in said and "InvalidStateError" not in log.read_text(errors="replace")
