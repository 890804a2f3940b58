"""A deferred class statement's skeleton: the text with the bodies of the methods that cannot add to its summary
replaced by ``pass``, so that parsing it parses a third to two fifths less of a model file's class text.

A :class:`~spec_contract.engine.summarise.summary.ClassSummary` reads a method's body only for: ``self.<x> =``
assignments (members and delegates), calls of the same method elsewhere (``super().<m>(…)``, forwards
``self.model.<m>(…)``), ``with self._mark_language_model(…)``, imports (local bindings) and, in ``__init__``,
``__new__`` and ``__getattr__``, more. A body whose text spells none of these (see :func:`_marks`: a superset,
read from the text with strings and comments in it) gives nothing then, except its ``factories`` (what a
``return`` builds): a method whose skipped body returns something is listed in the summary's ``unread`` and its
factories are read when resolution asks for that name (:func:`~spec_contract.engine.summarise.deferred.factory`).

Only what is sure is skipped, else the method is kept: its name and body ASCII, every line of the body indented
deeper than the ``def`` (a line that is not could start the next statement), its triple quotes paired and each
surely a string's start or end (one inside a one-quote string or a comment misleads the split).
The header ends at the first line ending in ``:``. The skeleton keeps every other line as it is, so positions are
the whole text's, and the parse that reads it checks that each ``pass`` landed as the whole body of the method it
replaced (a header cut short leaves a bracket open, which does not parse); anything else, and the statement is
parsed whole (each ``ClassSummary`` of every class statement of 16 SGLang, vLLM, Aphrodite and TokenSpeed
releases came out equal to the whole parse's, the factories asked for included).

What is not parsed is not checked: a syntax error inside a skipped body is not found (an editor buffer is always
parsed whole, see :mod:`~spec_contract.engine.summarise.scan`).
"""

from __future__ import annotations

import ast
import functools
import re
from bisect import bisect_left
from typing import NamedTuple

from spec_contract.engine.summarise.statements import body_starts, statement_starts

_ALWAYS_READ = frozenset({"__init__", "__new__", "__getattr__"})
# A method's decorators (one line each) and ``def`` up to its name; then the first line ending in a colon (a
# comment after it aside) ends the header: one that does not (a colon in a string or comment) leaves brackets
# open in the skeleton, which then does not parse
_METHOD = re.compile(r"[ ]*(?:@[^\n]*\n[ ]*)*(?:async[ ]+)?def[ ]+(\w+)[ ]*\(")
_HEADER_END = re.compile(r":[ ]*(?:#[^\n]*)?\n")
# ``self.<x>`` followed by what may follow an assignment target (``=``; ``,`` in a tuple of targets, see
# ``_tuple_target``; ``:`` of an annotated one where a statement starts, see ``_marks``), or with a comment
# inside; ``(self).x`` and line continuations included. No word boundary before ``self``: the literal start
# is what lets the expression skip ahead fast, and ``myself.x =`` only keeps a body that could be skipped.
_SELF_TARGET = re.compile(r"self[\s)\\]*(?:#|\.[\s\\]*(?:#|\w+[\s)\]\\]*(=(?!=)|,|#|:)))")
_DOUBLE, _SINGLE = '"' * 3, "'" * 3  # written so: the file's own split pairs them (see ``statement_starts``)


class Skipped(NamedTuple):
    """A method whose body the skeleton replaced: the body's ``pass`` line and, when the body returns
    something, the method's lines (1-based, decorators included) to read its factories from later."""

    pass_line: int
    name: str
    lines: tuple[int, int] | None


def skeleton(statement: str, first_line: int) -> tuple[str, dict[int, Skipped]] | None:
    """The skeleton of a class statement and its skipped methods by ``def`` line (1-based, as ``ast`` numbers
    them); None when no method body is skipped or the text is not plain enough to tell (see the module).

    What rules a body out is found by a few passes over the whole class body (positions, then per method a
    bisection), not per method: a class has hundreds of them."""
    if "\r" in statement:  # it ends a line for the parser and not for the line counts here
        return None
    start, indent = next(body_starts(statement), (0, ""))
    if not indent or indent.strip(" "):
        return None
    body = statement[start:]
    starts = statement_starts(body, indent) + [len(body)]
    quotes: tuple[list[int], list[int]] = ([], [])  # where the triple quotes of each kind are
    commas: list[re.Match[str]] = []  # ``self.<x>,``: see ``_tuple_target``
    marks = _marks(body, len(indent), quotes, commas)
    comma_at = [m.start() for m in commas]
    out = [statement[:start]]
    skipped: dict[int, Skipped] = {}
    emitted = 0  # the body up to here is in ``out``
    line, counted = first_line + 1 + statement.count("\n", 0, start), 0  # the 1-based line at ``counted``
    for k in range(len(starts) - 1):
        begin, stop = starts[k], starts[k + 1]
        found = _METHOD.match(body, begin, stop)
        end = _HEADER_END.search(body, found.end(), stop) if found else None
        if found is None or end is None:
            continue
        name, after = found.group(1), end.end()
        if name in _ALWAYS_READ or not name.isascii() or _within(marks, after, stop) \
                or _names_own(body, after, stop, name) \
                or any((bisect_left(at, stop) - bisect_left(at, after)) % 2 for at in quotes) \
                or any(_tuple_target(body, commas[i], stop)
                       for i in range(bisect_left(comma_at, after), bisect_left(comma_at, stop))):
            continue
        kept = body[after:stop].split("\n")
        last = next((i for i in range(len(kept) - 1, -1, -1)
                     if kept[i].strip() and not kept[i].lstrip().startswith("#")), -1)
        if last < 0:  # the body's last line of code, where its ``pass`` goes (the method ends there)
            continue
        line += body.count("\n", counted, begin)
        counted = begin
        returns = body.find("return", after, stop) >= 0
        lines = body.count("\n", begin, stop) - (body[stop - 1] == "\n")  # the method's lines, less one
        skipped[line + body.count("\n", begin, found.start(1))] = Skipped(
            line + body.count("\n", begin, after) + last, name, (line, line + lines) if returns else None)
        pass_line = [""] * len(kept)
        pass_line[last] = " " * (len(indent) + 1) + "pass"
        out += (body[emitted:after], "\n".join(pass_line))
        emitted = stop
    out.append(body[emitted:])
    return ("".join(out), skipped) if skipped else None


def _marks(body: str, indent: int, quotes: tuple[list[int], list[int]], commas: list[re.Match[str]]
           ) -> list[int]:
    """Where the class body holds what keeps a method's body from being skipped (see the module), sorted: a
    line of code no deeper than the ``def`` s (the ``def`` lines themselves are in no body), ``import``,
    ``_mark_language_model``, a possible ``self.<x> =`` (or ``:`` where a statement starts), a non-ASCII
    character, a triple quote the split's pairing may take wrongly (see ``_real_quote``). The triple quotes and the
    ``self.<x>,`` found on the way go to ``quotes`` and ``commas``."""
    found = [m.start() + 1 for m in _shallow_line(indent).finditer(body)]
    for word in ("import", "_mark_language_model"):
        at = body.find(word)
        while at >= 0:
            found.append(at)
            at = body.find(word, at + 1)
    if not body.isascii():
        found += [m.start() for m in _NON_ASCII.finditer(body)]
    for m in _SELF_TARGET.finditer(body):
        follow = m.group(1)
        if follow == ":":
            at, crossed = m.start() - 1, False
            while at >= 0 and body[at] in " \n(\\":
                crossed = crossed or body[at] == "\n"
                at -= 1
            if crossed or at < 0 or body[at] in ";:":
                found.append(m.start())
        elif follow == ",":
            commas.append(m)
        elif follow is not None and follow != "#" or _target_after_comment(body, m.end()):
            found.append(m.start())
    for quote, positions in zip((_DOUBLE, _SINGLE), quotes):
        at = body.find(quote)
        while at >= 0:
            positions.append(at)
            if not _real_quote(body, at, quote):
                found.append(at)
            at = body.find(quote, at + 3)
    found.sort()
    return found


def _target_after_comment(body: str, at: int) -> bool:
    """Whether what follows the comment after ``self`` or ``self.<x>`` (ending before ``at``), and any comments,
    brackets closing and continuations after it, may go on an assignment target: ``.``, ``=``, ``,`` or ``:``."""
    while True:
        at = body.find("\n", at)
        if at < 0:
            return False
        while at < len(body) and body[at] in " \n)]\\":
            at += 1
        if at == len(body) or body[at] != "#":
            break
    return at < len(body) and (body[at] in ".,:" or body[at] == "=" and body[at + 1:at + 2] != "=")


def _real_quote(body: str, at: int, quote: str) -> bool:
    """Whether the triple quote at ``at`` is surely a string's start or end, as the split's pairing takes it (not
    inside a one-quote string or a comment): its line, not continued from the line above, holds no backslash
    and starts with it (a string's prefix aside), then holds no other of its kind or one more at its end with
    neither ``#`` nor its quote between (``\"\"\"The model's weights.\"\"\"``); or holds it once, at its end, after
    neither ``#`` nor its quote."""
    start = body.rfind("\n", 0, at) + 1
    end = body.find("\n", at)
    line = body[start:end if end >= 0 else len(body)].rstrip()
    if "\\" in line or body[start - 2:start] == "\\\n":
        return False
    count, lead = line.count(quote), line.lstrip(" ").lstrip("rRbBuUfF")
    if lead.startswith(quote) and count == 1:
        return True
    inside = lead[3:-3] if lead.startswith(quote) and count == 2 and line.endswith(quote) else \
        line[:-3] if count == 1 and line.endswith(quote) else None
    return inside is not None and "#" not in inside and quote[0] not in inside


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def verified(body: list[ast.stmt], skipped: dict[int, Skipped]) -> bool:
    """Whether the parsed skeleton is one class whose methods at the skipped ``def`` lines have exactly the
    ``pass`` put there as body (else a split went wrong, and the statement is parsed whole)."""
    if len(body) != 1 or type(body[0]) is not ast.ClassDef:
        return False
    found = 0
    for stmt in body[0].body:
        if type(stmt) is ast.FunctionDef or type(stmt) is ast.AsyncFunctionDef:
            skip = skipped.get(stmt.lineno)
            if skip is not None:
                inner = stmt.body
                if stmt.name != skip.name or len(inner) != 1 or type(inner[0]) is not ast.Pass \
                        or inner[0].lineno != skip.pass_line:
                    return False
                found += 1
    return found == len(skipped)


def _within(marks: list[int], start: int, stop: int) -> bool:
    return bisect_left(marks, stop) > bisect_left(marks, start)


def _names_own(body: str, start: int, stop: int, name: str) -> bool:
    """Whether the body ``body[start:stop]`` may call or forward its own method: ``.<name>`` as a whole word,
    spaces and line continuations after the dot included, and (a comment may hide a dot) any ``<name>`` that
    starts a line of its own."""
    at = body.find(name, start, stop)
    while at >= 0:
        after = at + len(name)
        if not (body[at - 1].isalnum() or body[at - 1] == "_") \
                and not (after < len(body) and (body[after].isalnum() or body[after] == "_")):
            before = at - 1
            while before >= 0 and body[before] in " \t\n\\":
                if body[before] == "\n":
                    return True
                before -= 1
            if before >= 0 and body[before] == ".":
                return True
        at = body.find(name, after, stop)
    return False


def _tuple_target(rest: str, found: re.Match[str], stop: int) -> bool:
    """Whether ``self.<x>,`` may be an element of a tuple of assignment targets, not of a call's arguments or
    a value (a superset). The ``=`` after a tuple of targets is outside the brackets that hold ``self``
    (``(self.x,\n y) = …``), or in the same brackets on the same line with no bracket left open before
    ``self`` on its line (``self.x, y = …``; ``f(self.x, y=1)`` is a keyword). One-line strings without a
    backslash and comments are skipped; any other quote or a backslash on the way counts as such an ``=``. The
    statement is over at a newline outside the brackets it started in, the body at ``stop``."""
    prefix = _STRING.sub("", rest[rest.rfind("\n", 0, found.start()) + 1:found.start()])
    if "'" in prefix or '"' in prefix or "\\" in prefix:
        return True
    opened = sum(map(prefix.count, "([{")) - sum(map(prefix.count, ")]}"))
    matched = found.group()
    depth, crossed = -(matched.count(")") + matched.count("]")), False
    for token in _TOKEN.finditer(rest, found.end(), stop):
        c = token.group()
        if c in _OPENING:
            depth += 1
        elif c in _CLOSING:
            depth -= 1
        elif c == "\n":
            if depth < 0:
                return False
            crossed = crossed or depth == 0
        elif c == "=":
            at = token.start()
            if rest[at + 1:at + 2] != "=" and rest[at - 1] not in _BEFORE_NOT_ASSIGNMENT \
                    and (depth < 0 or depth == 0 and not crossed and opened <= 0):
                return True
        elif len(c) == 1 and c in _UNSURE_CHARS:  # not a string or comment the expression knows
            return True
    return False


_STRING = re.compile(r"\"[^\"\\\n]*\"|'[^'\\\n]*'")
# What the scan of ``_tuple_target`` stops at: brackets, newlines, ``=``, one-line strings, comments, other
# quotes and backslashes
_TOKEN = re.compile(r"[()\[\]{}\n=]|\"[^\"\\\n]*\"|'[^'\\\n]*'|#[^\n]*|[\"'\\]")
_OPENING, _CLOSING, _UNSURE_CHARS = frozenset("([{"), frozenset(")]}"), frozenset("'\"\\")
_BEFORE_NOT_ASSIGNMENT = frozenset("=!<>:+-*/%&|^@")  # ``==``, ``<=``, ``:=``, ``+=`` …


@functools.lru_cache(maxsize=16)
def _shallow_line(indent: int) -> re.Pattern[str]:
    """A line of code indented no deeper than ``indent`` spaces (a comment or closing bracket aside)."""
    return re.compile(r"\n {0," + str(indent) + r"}[^ \n#)\]}]")
