"""Splitting a file's text into statements before parsing them, and parsing each where it stands.

A model file is mostly class statements that a check never asks for; an editor keystroke changes one
statement of a file. Both are served by cutting the text at the lines where statements start (without
parsing), then parsing only the pieces wanted, each with its lines numbered as in the whole file. A piece
that parses on its own is exactly the statements a parse of the whole file gives there.
"""

from __future__ import annotations

import ast
import functools
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Container, Iterator
from typing import Any

# A top-level statement starts on a line that begins with code: not indented, not a comment, not a closing
# bracket and not the continuation of a compound statement.
_TOP_LEVEL_LINE = re.compile(r"\n(?![\s#)\]}]|(?:else|elif|except|finally)\b)")
CLASS_STATEMENT = re.compile(r"class\s+(\w+)")
_CLASS_LINE = re.compile(r"^class\s+(\w+)", re.MULTILINE)
_DOUBLE, _SINGLE = '"' * 3, "'" * 3  # written so: this file's own split pairs them (see ``statement_starts``)
_MISLEADS_SPLIT = re.compile("|".join(map(re.escape, (_DOUBLE, _SINGLE, "\\"))))  # see ``_deferrable``
_MERGES_BEFORE_REST = 4  # a statement that keeps failing to parse is parsed with the rest of the file


def error_message(exc: BaseException) -> str:
    where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
    return f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}{where}"


def top_level(text: str, known: Container[tuple[str, str]], *, lazy: bool = False,
               per_statement: bool = True, filename: str = "<unknown>",
               parse: Callable[[str, int], list[ast.stmt]] | None = None,
               ) -> list[tuple[tuple[int, str, str], list[ast.stmt] | None]]:
    """``((first line, text, line above), body)`` per top-level statement; ``body`` is None for a statement
    whose ``(text, line above)`` is in ``known``, which is not parsed again, and (``lazy``) for a class
    statement, parsed when its class (or an import inside it) is asked for, or a function without imports, of
    no use in a model file.

    Splitting happens on the text, before parsing: a line that starts with code starts a statement, except
    inside a triple-quoted string or after a decorator. A wrong split (a bracket left open, a string the
    quote pairing missed) leaves a piece that does not parse on its own; it is then parsed together with
    the statements after it until it does. A piece that parses on its own ends where the tokenizer is back at
    the top level, so its statements are exactly the ones a parse of the whole file gives.

    Without ``per_statement`` (no memo to fill), consecutive statements that are parsed are parsed as one
    piece: the whole file when nothing is deferred. Each piece is parsed where it stands in the file (see
    :func:`parse_at`), which costs a little for every line above it; with ``parse``, a piece of one or more
    statements is parsed by it (given the text and first line), which must give what ``parse_at`` gives.
    """
    parse = parse or (lambda statement, line: parse_at(statement, line, filename))
    if not per_statement and not lazy:
        return [((0, text, ""), parse_at(text, 0, filename))]
    dropped: list[int] = []
    starts = statement_starts(text, dropped=dropped) + [len(text)]
    deferrable = [lazy and _deferrable(text, starts[k], starts[k + 1], dropped) for k in range(len(starts) - 1)]
    out: list[tuple[tuple[int, str, str], list[ast.stmt] | None]] = []
    i, line = 0, 0
    while i < len(starts) - 1:
        previous_line = text[text.rfind("\n", 0, starts[i] - 1) + 1:starts[i] - 1] if starts[i] else ""
        j, body = i + 1, None
        if not per_statement and not deferrable[i]:  # the run of statements up to the next deferred one
            while j < len(starts) - 1 and not deferrable[j]:
                j += 1
            try:
                body = parse_at(text[starts[i]:starts[j]], line, filename)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                j, body = i + 1, None  # somewhere in the run: find it statement by statement
        statement = text[starts[i]:starts[j]]
        while body is None and (statement, previous_line) not in known and not deferrable[i]:
            try:
                body = parse(statement, line)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                if j == len(starts) - 1:
                    # The rest does not parse: parsing the whole file raises the file's own error (and were
                    # it to parse, the split was wrong, and the file is one statement).
                    return [((0, text, ""), parse_at(text, 0, filename))]
                j = j + 1 if j - i < _MERGES_BEFORE_REST else len(starts) - 1
                statement = text[starts[i]:starts[j]]
        out.append(((line, statement, previous_line), body))
        line += statement.count("\n")
        i = j
    return out


def _deferrable(text: str, start: int, end: int, dropped: list[int]) -> bool:
    """Whether the statement ``text[start:end]`` is a model file's statement whose parsing can wait (a class)
    or be skipped (a function without imports).

    An import inside a function binds a name the module's other code may be resolved through (see
    :func:`~spec_contract.engine.summarise.deferred.local_import`): such a function is parsed now, and a
    class when a name it may import is looked up.

    Neither is parsed here, so neither confirms that the split before the next statement was right; a wrong
    one makes some later statement fail to parse, and the file is then parsed whole (see ``top_level``). A
    split missed is not caught so: a start the quote pairing took for the inside of a string (a triple quote
    in a one-quote string, in a function) leaves the function holding the class below it, which skipping the
    function would lose. So a statement with a line that may start another (code at column 0: one of the
    ``dropped`` starts of :func:`statement_starts`, found by bisection rather than by searching the
    statement's text again) is parsed now, except the ``class`` or ``def`` line of a decorated one (and its
    decorators' own lines): the split drops the line after a decorator. Those decorators must hold no triple
    quote or backslash, the only ways a line of theirs at column 0 can be inside a string, which could hold
    a ``class`` line (vLLM registers most multimodal models with a decorator: 2.4 MB of its class text).
    """
    inside = bisect_right(dropped, start)
    first = start
    while text.startswith("@", start) and inside < len(dropped) and dropped[inside] < end:
        start = dropped[inside]  # a decorator: the next line at column 0 is another one, or the class or def
        inside += 1
    if start != first and _MISLEADS_SPLIT.search(text, first, start):
        return False
    if inside < len(dropped) and dropped[inside] < end:
        return False
    if text.startswith("class", start):
        return CLASS_STATEMENT.match(text, start, end) is not None
    return text.startswith(("def ", "async def "), start) and text.find("import", start, end) < 0


def deferred_class(statement: str) -> str | None:
    """The name (as written) of the class a statement that ``top_level`` deferred defines, None for a function
    it skipped: its first line's, or that of the line after its decorators (the first line at column 0 that
    starts with ``class``: each line at column 0 before it is a decorator's, see ``_deferrable``)."""
    found = _CLASS_LINE.search(statement) if statement.startswith("@") else CLASS_STATEMENT.match(statement)
    return found.group(1) if found is not None else None


# What may stand between the ``import`` keyword and the first imported name
_AFTER_IMPORT = re.compile(r"(?:[ \t]|\\\r?\n)*")
_LOGICAL_LINE_END = re.compile(r"(?<!\\)\r?\n")
_WORD = re.compile(r"\w+")


def import_words(text: str) -> frozenset[str]:
    """Every name an import statement in ``text`` may bind, without parsing it (a superset).

    A name an import binds is spelled, as a whole word, after the ``import`` keyword and before the
    statement ends: at the closing bracket of ``import (a, b)``, or else at the end of the logical line.
    Every ``import`` counts (in a longer word, a string or a comment too), and a bracket holding a comment
    (which may hide a ``)``) counts as running to the end of the text, so a name may be in here for nothing,
    but an imported name is never missing. The keyword and the brackets are ASCII wherever they count (the
    parser does not normalise keywords); the words are read in NFKC form, as the parser reads identifiers.
    """
    words: set[str] = set()
    found = text.find("import")
    while found >= 0:
        after = _AFTER_IMPORT.match(text, found + 6)  # matches always (it may match nothing)
        start = after.end() if after else found + 6
        if text.startswith("(", start):
            end = text.find(")", start)
            if end < 0 or "#" in text[start:end]:
                end = len(text)
        else:
            line_end = _LOGICAL_LINE_END.search(text, start)
            end = line_end.start() if line_end else len(text)
        span = text[start:end]
        words.update(_WORD.findall(span if span.isascii() else unicodedata.normalize("NFKC", span)))
        found = text.find("import", found + 6)
    return frozenset(words)


def statement_starts(text: str, indent: str = "", dropped: list[int] | None = None) -> list[int]:
    """Offsets where statements may start (see :func:`top_level`): top-level ones, or with ``indent`` those
    of a block indented so (``text`` then starts at one). ``dropped`` gets the offsets of the lines that
    start with code but start no statement (inside a triple-quoted string, after a decorator), in order."""
    line_start = _TOP_LEVEL_LINE if not indent else _block_line(indent)
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        # a lone carriage return ends a line for the parser but not for the line count here: one statement
        if dropped is not None:
            dropped.extend(m.end() for m in line_start.finditer(text) if m.end() < len(text))
        return [0]
    candidates = [0] + [m.end() for m in line_start.finditer(text) if m.end() < len(text)]
    strings: list[tuple[int, int]] = []  # triple-quoted strings, paired naively: a miss only costs a merge
    quote = None
    for start, found in _triple_quotes(text):
        if quote is None:
            quote, opened = found, start
        elif found == quote:
            strings.append((opened, start + 3))
            quote = None
    if quote is not None:
        strings.append((opened, len(text)))
    starts, k = [], 0
    for n, offset in enumerate(candidates):
        while k < len(strings) and strings[k][1] <= offset:
            k += 1
        inside_string = k < len(strings) and strings[k][0] < offset
        if n == 0 or not (inside_string or text[candidates[n - 1] + len(indent)] == "@"):
            starts.append(offset)
        elif dropped is not None:
            dropped.append(offset)
    return starts


def _triple_quotes(text: str) -> Iterator[tuple[int, str]]:
    """Where the triple quotes stand in ``text``, in order, as ``re.finditer`` of the two finds them (a quote
    found is skipped whole), found by ``str.find``: a third of the time of the expression on a 5,800-line
    buffer, which this does at every keystroke."""
    double, single = text.find(_DOUBLE), text.find(_SINGLE)
    while double >= 0 or single >= 0:
        if single < 0 or 0 <= double < single:
            yield double, _DOUBLE
            double = text.find(_DOUBLE, double + 3)
        else:
            yield single, _SINGLE
            single = text.find(_SINGLE, single + 3)


@functools.lru_cache(maxsize=16)
def _block_line(indent: str) -> re.Pattern[str]:
    """A line that starts a statement of a block indented by ``indent`` (as ``_TOP_LEVEL_LINE`` at the top)."""
    return re.compile(r"\n(?=" + re.escape(indent) + r"(?![\s#)\]}]|(?:else|elif|except|finally)\b))")


# A line that may end a class statement's header, and the first indented line of code after it
_HEADER_END = re.compile(r":[ \t]*(?:#[^\r\n]*)?\r?$", re.MULTILINE)
_INDENTED_CODE = re.compile(r"^([ \t]+)[^\s#]", re.MULTILINE)
_HEADER_TRIES = 4


class BodyStatements:
    """A piece of a class body, parsed, with the line its statements are numbered from: a piece that moved
    since (a new line above it) is renumbered only when an edit parses its class again (see ``at``)."""

    __slots__ = ("line", "nodes", "_positioned")

    def __init__(self, line: int, nodes: list[ast.stmt]) -> None:
        self.line = line
        self.nodes = nodes
        self._positioned: list[Any] | None = None  # every node with a position, found on the first move

    def at(self, line: int) -> list[ast.stmt]:
        """The statements numbered as parsing the piece at ``line`` numbers them (renumbered in place): a
        fifth of the cost of parsing them the first time, a thirtieth after."""
        if line != self.line:
            if self._positioned is None:
                self._positioned = [node for statement in self.nodes for node in ast.walk(statement)
                                    if "lineno" in node._attributes]
            lines = line - self.line
            for node in self._positioned:
                node.lineno += lines
                node.end_lineno += lines
            self.line = line
        return self.nodes


# Class body pieces by (first line, text); each is used once per scan (taken out of the memo it came from)
Members = dict[tuple[int, str], BodyStatements]


def class_header(statement: str, first_line: int, filename: str) -> tuple[ast.ClassDef, int, str] | None:
    """A class statement's header (decorators, ``class X(...):``) parsed alone, with a ``pass`` body: the class
    node, the offset where its body starts and the body's indentation; None where it does not split so.

    The header is the text up to the first indented line of code after a line ending in ``:`` (see
    :func:`body_starts`); it must parse with a ``pass`` body."""
    for start, indent in body_starts(statement):
        try:
            module = parse_at(statement[:start] + indent + "pass\n", first_line, filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if len(module) == 1 and type(module[0]) is ast.ClassDef and len(module[0].body) == 1:
            return module[0], start, indent
    return None


def body_starts(statement: str) -> Iterator[tuple[int, str]]:
    """Where a class statement's body may start, and its indentation: the first indented line of code after
    each of the first lines that end in ``:`` (the first is right unless a comment or string in the header
    ends so)."""
    for tries, header_end in enumerate(_HEADER_END.finditer(statement)):
        code = _INDENTED_CODE.search(statement, header_end.end())
        if tries == _HEADER_TRIES or code is None:
            return
        yield code.start(), code.group(1)


def parse_by_member(statement: str, first_line: int, filename: str, known: Members, made: Members
                    ) -> list[ast.stmt] | None:
    """A class statement parsed one body statement at a time, each found in ``known`` or parsed and put in
    ``made`` (keyed by first line and text); None where it does not split so, for the caller to parse it whole.

    The header is read by :func:`class_header`. The body is split as the file is (see
    :func:`top_level`), at lines with the body's indentation, and each piece must parse on its own inside a
    class of its own: so each ends where the tokenizer is back at the body's level, and the pieces are exactly
    the statements of the whole class. An editor keystroke in a method of a 1,300-line class then parses that
    method, not the class; and a new line in it moves the statements below without parsing them again (a
    statement not in ``known`` at its line is looked for at another: renumbering its nodes costs a fifth of
    parsing it).
    """
    found = class_header(statement, first_line, filename)
    if found is None:
        return None
    cls, start, indent = found
    header, body = statement[:start], statement[start:]
    starts = statement_starts(body, indent) + [len(body)]
    members: list[ast.stmt] = []
    elsewhere: dict[str, int] | None = None  # text → a line ``known`` has it at, made on the first miss

    def moved(piece: str) -> BodyStatements | None:
        nonlocal elsewhere
        if elsewhere is None:
            elsewhere = {text: at for at, text in known}
        at = elsewhere.pop(piece, None)
        return known.pop((at, piece), None) if at is not None else None

    i, line = 0, first_line + header.count("\n")
    while i < len(starts) - 1:
        j = i + 1
        while (nodes := _member(body[starts[i]:starts[j]], line, filename, known, moved)) is None:
            if j == len(starts) - 1:
                return None
            j = j + 1 if j - i < _MERGES_BEFORE_REST else len(starts) - 1
        piece = body[starts[i]:starts[j]]
        made[(line, piece)] = nodes
        members.extend(nodes.nodes)
        line += piece.count("\n")
        i = j
    cls.body = members
    cls.end_lineno, cls.end_col_offset = members[-1].end_lineno, members[-1].end_col_offset
    return [cls]


def _member(piece: str, line: int, filename: str, known: Members,
            moved: Callable[[str], BodyStatements | None]) -> BodyStatements | None:
    """The statements of one piece of a class body, from ``known`` (at that line, else where ``moved`` finds
    the same text) or parsed inside a class of its own (placed on the line above the piece, so that lines come
    out as in the file); None if it does not parse alone."""
    found = known.pop((line, piece), None) or moved(piece)
    if found is not None:
        found.at(line)
        return found
    try:
        module = parse_at("class _:\n" + piece, line - 1, filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return BodyStatements(line, module[0].body) if len(module) == 1 and type(module[0]) is ast.ClassDef else None


def parse_at(statement: str, first_line: int, filename: str) -> list[ast.stmt]:
    """Parse a top-level statement where it stands in its file: line numbers come out as in the whole file."""
    return ast.parse("\n" * first_line + statement, filename=filename).body
