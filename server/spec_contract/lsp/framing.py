"""Reading JSON-RPC messages from a byte stream that may be broken, without ever going deaf or dying.

pygls 2.1.1's reader (``pygls.io_.run_async``) trusts its input: it allocates whatever ``Content-Length``
says (10**15 kills the process with a MemoryError, 2**64 with an OverflowError), accepts only the exact
``Content-Length: N\\r\\n`` spelling, and after any header it cannot use it keeps its state, so every later
message is lost. This reader

- caps the length (:data:`MAX_CONTENT_LENGTH`) and reads header lines in bounded chunks, so no input makes it
  allocate more than that;
- accepts the header name in any case and with spaces around the value (HTTP header rules);
- resynchronises on the next ``Content-Length`` line, even one glued to the end of garbage (the usual shape
  after a wrong length: the rest of a body, then the next header);
- hands back the bytes after a complete JSON value when a length was too long, so the next header is found.

Whatever it had to skip is reported with the frame that follows, for the server to log.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

MAX_CONTENT_LENGTH = 256 * 1024 * 1024  # far above any real message (a whole large file in didOpen is a few MB)
LINE_LIMIT = 64 * 1024  # a header line longer than this is garbage; it is read (and dropped) in pieces of this size
_CARRY = 128  # bytes of a dropped piece kept for the next one: a header split between two pieces is still found

_OTHER_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*[ \t]*:[^\r\n]*\r?\n\Z")  # Content-Type and the like
_LENGTH_VALUE = re.compile(rb"[0-9]{1,20}")


@dataclass
class Frame:
    """A message body (None when the header block ended without a usable length) and what was dropped before."""

    body: bytes | None
    skipped: int = 0
    problems: list[str] = field(default_factory=list)


class FrameReader:
    """Frames from a blocking binary stream, one :meth:`next_frame` call at a time (never concurrently)."""

    def __init__(self, stream: BinaryIO, max_length: int = MAX_CONTENT_LENGTH) -> None:
        self.stream = stream
        self.max_length = max_length
        self._pending = b""  # bytes given back by unread(), read before the stream

    def unread(self, data: bytes) -> None:
        self._pending = data + self._pending

    def _readline(self) -> bytes:
        if b"\n" in self._pending[:LINE_LIMIT]:
            line, _, self._pending = self._pending.partition(b"\n")
            return line + b"\n"
        if len(self._pending) >= LINE_LIMIT:
            line, self._pending = self._pending[:LINE_LIMIT], self._pending[LINE_LIMIT:]
            return line
        line, self._pending = self._pending, b""
        return line + self.stream.readline(LINE_LIMIT - len(line))

    def _read(self, n: int) -> bytes:
        taken, self._pending = self._pending[:n], self._pending[n:]
        if len(taken) == n:
            return taken
        return taken + self.stream.read(n - len(taken))

    def next_frame(self) -> Frame | None:
        """The next frame, or None at the end of the stream (also in the middle of a body)."""
        frame = Frame(None)
        length: int | None = None
        headers = False  # inside a header block: a line that looks like a header is not garbage
        while True:
            line = self._readline()
            if not line:
                return None
            if not line.endswith(b"\n"):  # a piece of an over-long line: garbage, but keep its tail
                if len(line) < LINE_LIMIT:  # cut short by the end of the stream: no header can follow
                    return None
                keep = min(_CARRY, len(line) - 1)
                frame.skipped += len(line) - keep
                self._pending = line[len(line) - keep:] + self._pending
                headers, length = False, None
                continue
            if line in (b"\r\n", b"\n"):
                if length is not None:
                    break
                if headers:  # the block ends without a usable length: the body cannot be found
                    frame.problems.append("a header block without a usable Content-Length")
                    return frame
                frame.skipped += len(line)
                continue
            match = _content_length(line)
            if match is not None:
                frame.skipped += match[0]  # garbage glued before the header
                headers, length = True, self._length(match[1], frame)
            elif _OTHER_HEADER.fullmatch(line):  # Content-Type and the like, before or after the length
                headers = True
            else:
                frame.skipped += len(line)
                headers, length = False, None
        body = self._read(length)
        if len(body) < length:
            return None
        frame.body = body
        return frame

    def _length(self, value: bytes, frame: Frame) -> int | None:
        if not _LENGTH_VALUE.fullmatch(value):
            frame.problems.append(f"Content-Length {value[:40]!r} is not a length")
            return None
        length = int(value)
        if length > self.max_length:
            frame.problems.append(f"Content-Length {length} is over the limit of {self.max_length} bytes")
            return None
        return length


def _content_length(line: bytes) -> tuple[int, bytes] | None:
    """Where a ``Content-Length`` header starts in a line that ends with one (after any garbage), and its value:
    what ``content-length[ \\t]*:[ \\t]*([^\\r\\n]*?)[ \\t]*\\r?\\n\\Z`` (any case) would find. Read by hand: that
    pattern backtracks over every space before a stray character, so a header line of 60,000 spaces held the
    reader for half a minute."""
    end = len(line) - 1  # the line ends with its only ``\n``
    if line[end - 1:end] == b"\r":
        end -= 1
    last_cr = line.rfind(b"\r", 0, end)  # the value runs from the colon to ``end`` and holds no ``\r``
    lowered = line.lower()
    start = lowered.find(_HEADER_NAME)
    while start >= 0:
        colon = start + len(_HEADER_NAME)
        while colon < end and line[colon] in b" \t":
            colon += 1
        if colon < end and line[colon] == ord(":") and colon > last_cr:
            return start, line[colon + 1:end].strip(b" \t")
        start = lowered.find(_HEADER_NAME, start + 1)
    return None


class ParseError(Exception):
    """A body that is not JSON (JSON-RPC error -32700); ``rest`` is what of it goes back to the reader: the
    start of the next message's header, read because the length was too long."""

    def __init__(self, why: str, rest: bytes = b"") -> None:
        super().__init__(why)
        self.rest = rest


_HEADER_NAME = b"content-length"
_HEADER_LIKE = re.compile(rb"[A-Za-z][A-Za-z0-9-]*[ \t]*:")  # ``Content-Length: 5``, ``Content-Type: …``


def header_tail(data: bytes) -> bytes:
    """From where a ``Content-Length`` header starts in ``data`` (or the prefix of one it ends with) to its
    end: what a too-long length took of the next message."""
    found = re.search(_HEADER_NAME, data, re.IGNORECASE)
    if found is not None:
        return data[found.start():]
    for size in range(min(len(_HEADER_NAME) - 1, len(data)), 0, -1):
        if _HEADER_NAME.startswith(data[-size:].lower()):
            return data[-size:]
    return b""


def _starts_a_header(data: bytes) -> bool:
    return _HEADER_LIKE.match(data) is not None or _HEADER_NAME.startswith(data.lower())


def parse_body(body: bytes) -> tuple[Any, bytes]:
    """The JSON value of a body, and what follows it when the header's length was too long.

    A body that holds a complete value and then the start of a header (the next message's, read because the
    length was too large) gives that value; the rest goes back to the reader. A body that is not JSON raises
    ParseError, with the next header's start when it holds one, so the next message is never lost (not even
    when the body is not UTF-8: it is read bytewise here).
    """
    try:
        return json.loads(body), b""
    except RecursionError:
        raise ParseError("the message is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        problem = exc
    text = body.decode("utf-8", "surrogateescape")  # each byte that is not UTF-8 stands for itself
    try:
        start = len(text) - len(text.lstrip())
        value, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        raise ParseError(f"the message is not JSON: {problem}", header_tail(body)) from None
    rest = text[end:].encode("utf-8", "surrogateescape")
    try:
        text[:end].encode("utf-8")
    except UnicodeEncodeError:
        raise ParseError(f"the message is not JSON: {problem}", rest) from None
    if rest.strip() and not _starts_a_header(rest.lstrip()):  # the length was right, and the body holds more
        raise ParseError(f"the message is not JSON: data after the value ({rest[:20]!r})", header_tail(rest))
    return value, rest


async def read_messages(reader: FrameReader, executor: Executor | None, is_stopped: Callable[[], bool],
                        on_message: Callable[[Any], None], on_parse_error: Callable[[str], None],
                        on_skipped: Callable[[Frame], None]) -> None:
    """Feed every message of ``reader`` to ``on_message`` until the stream ends or ``is_stopped()``.

    Frames are read on ``executor`` (a blocking read must not stop the event loop); each message is handled on
    the loop before the next frame is read, as pygls does, so handlers see messages in order.
    """
    loop = asyncio.get_running_loop()
    while not is_stopped():
        frame = await loop.run_in_executor(executor, reader.next_frame)
        if frame is None:
            return
        if frame.skipped or frame.problems:
            on_skipped(frame)
        if frame.body is None:
            continue
        try:
            value, rest = parse_body(frame.body)
        except ParseError as exc:
            on_parse_error(str(exc))
            if exc.rest:
                reader.unread(exc.rest)
            continue
        if rest.strip():
            reader.unread(rest)
        on_message(value)
