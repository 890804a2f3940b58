"""Positions and names in parsed code: ``ast``'s byte columns as code points, attribute chains as tuples.

Every summary the scanner makes (classes, flow records) reports spans through :class:`Lines` and names
receivers and callees through :func:`chain_of`.
"""

from __future__ import annotations

import ast
import functools
import re

from spec_contract.engine.results import Span
from spec_contract.engine.summarise.summary import Chain, DeferredClass
from spec_contract.engine.text import split_lines

_IDENTIFIER_AFTER = re.compile(r"\s+(\w+)")


class Lines:
    """Converts ``ast``'s UTF-8 byte columns to code-point columns."""

    def __init__(self, text: str) -> None:
        self._text = text
        # An ASCII text's byte columns are its code-point columns: no line is looked at for them (a worker
        # file's flow records take one span per use, by the ten thousand)
        self._ascii = text.isascii()
        self._stripped: dict[int, str] = {}  # see ``text``

    @functools.cached_property
    def lines(self) -> list[str]:
        """Split when first read: most of a model file's statements are deferred and never look."""
        return split_lines(self._text)

    @classmethod
    def of_statement(cls, deferred: DeferredClass) -> Lines:
        """The lines a deferred statement's spans and suppression comment read, at their places in the file."""
        lines = cls(deferred.text)  # the line above is never a node's: ``_ascii`` is the statement's
        above = [""] * (deferred.first_line - 1) + [deferred.line_above] if deferred.first_line else []
        lines.lines = above + split_lines(deferred.text)
        return lines

    def col(self, lineno: int, byte_col: int) -> int:
        if self._ascii or lineno - 1 >= len(self.lines):
            return byte_col
        line = self.lines[lineno - 1]
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def text(self, lineno: int | None) -> str:
        """The line, stripped; ``lineno`` (1-based) as ``ast`` gives it, whose type allows None (each line
        stripped once: every use on it names it)."""
        if lineno is None:
            return ""
        found = self._stripped.get(lineno)
        if found is None:
            found = self._stripped[lineno] = self.lines[lineno - 1].strip() if 0 < lineno <= len(self.lines) else ""
        return found

    def name_span(self, lineno: int, keyword: str, name: str) -> Span:
        """Span of ``name`` after ``keyword`` (``class``/``def``) on a line, for definitions.

        ``ast`` gives the name as Python reads it, NFKC-normalised (``class 𝒲Llava`` defines ``WLlava``): the
        span is the identifier as written after the keyword, whatever its length."""
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        after = line.find(keyword + " ")
        start = line.find(name, after + len(keyword)) if after >= 0 else -1
        if start >= 0:
            return _span(lineno - 1, start, lineno - 1, start + len(name))
        written = _IDENTIFIER_AFTER.match(line, after + len(keyword)) if after >= 0 else None
        if written is not None:
            return _span(lineno - 1, written.start(1), lineno - 1, written.end(1))
        start = len(line) - len(line.lstrip())
        return _span(lineno - 1, start, lineno - 1, start + len(name))

    def node_span(self, node: ast.expr | ast.stmt) -> Span:
        end_line, end_col = _end(node)
        return _span(node.lineno - 1, self.col(node.lineno, node.col_offset),
                    end_line - 1, self.col(end_line, end_col))

    def attr_span(self, node: ast.Attribute) -> Span:
        end_line, end_col = node.end_lineno, node.end_col_offset  # ``_end``, without its call: a use takes one
        if end_line is None or end_col is None:
            end_line, end_col = node.lineno, node.col_offset
        if self._ascii:
            return _span(end_line - 1, end_col - len(node.attr), end_line - 1, end_col)
        end = self.col(end_line, end_col)
        start = end - len(node.attr)
        line = self.lines[end_line - 1] if 0 < end_line <= len(self.lines) else ""
        if not line.isascii():  # the attribute as written (NFKC can change its length, see name_span)
            start = _word_start(line, end, start)
        return _span(end_line - 1, start, end_line - 1, end)


def _word_start(line: str, end: int, otherwise: int) -> int:
    """Where the identifier that ends at ``end`` begins (``otherwise`` when no word character ends there), read
    backwards from ``end``: a pattern searched forwards (``\\w+\\Z``) would try every place a run of word
    characters before it starts, quadratic in a long one (a 40,000-character string on the line takes 24 s).
    Word characters are what ``\\w`` matches in a ``str`` pattern: alphanumerics and the underscore."""
    start = end
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
        start -= 1
    return start if start < end else otherwise


_NEW = object.__new__


def _span(line: int, col: int, end_line: int, end_col: int) -> Span:
    """``Span(line, col, end_line, end_col)``, made without its frozen ``__init__`` (one ``object.__setattr__``
    per field: three times the cost): a cold scan makes one for every member and use, by the ten thousand.
    ``Span`` has no ``__post_init__`` and no field outside ``__init__``."""
    span = _NEW(Span)
    fields = span.__dict__
    fields["line"], fields["col"], fields["end_line"], fields["end_col"] = line, col, end_line, end_col
    return span


def _end(node: ast.expr | ast.stmt) -> tuple[int, int]:
    """Where a parsed node ends (``ast`` types the end as optional: nodes made by hand may lack it)."""
    end_line, end_col = node.end_lineno, node.end_col_offset
    return (node.lineno, node.col_offset) if end_line is None or end_col is None else (end_line, end_col)


def chain_of(node: ast.AST) -> Chain | None:
    """The attribute chain an expression denotes (an assignment expression: the name it binds), or None for
    anything else."""
    parts: list[str] = []
    while True:
        # ``type(x) is``: parsed nodes' types are never subclassed, and this is the scanner's hottest loop
        if type(node) is ast.Name:
            parts.append(node.id)
            return tuple(reversed(parts))
        if type(node) is ast.Attribute:
            parts.append(node.attr)
            node = node.value
        elif type(node) is ast.Subscript:
            parts.append("[]")
            node = node.value
        elif type(node) is ast.Call:
            parts.append("()")
            node = node.func
        elif type(node) is ast.NamedExpr:  # ``(model := runner.model).x``: the name it binds
            node = node.target
        else:
            return None


def blocks_of(stmt: ast.stmt) -> list[ast.stmt]:
    """The statements of a compound statement's blocks in source order: its body, ``else``, ``finally``, ``except``
    handlers and ``case`` blocks (none for a simple statement)."""
    inner = [*getattr(stmt, "body", ()), *getattr(stmt, "orelse", ()), *getattr(stmt, "finalbody", ())]
    for handler in getattr(stmt, "handlers", ()):
        inner.extend(handler.body)
    for case in getattr(stmt, "cases", ()):
        inner.extend(case.body)
    return inner


def dotted(chain: Chain) -> str:
    return ".".join(chain)
