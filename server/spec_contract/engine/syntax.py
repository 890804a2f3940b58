"""Positions and names in parsed code: ``ast``'s byte columns as code points, attribute chains as tuples.

Every summary the scanner makes (classes, flow records) reports spans through :class:`Lines` and names
receivers and callees through :func:`chain_of`.
"""

from __future__ import annotations

import ast
import functools

from spec_contract.engine.results import Span
from spec_contract.engine.summary import Chain, DeferredClass
from spec_contract.engine.text import split_lines


class Lines:
    """Converts ``ast``'s UTF-8 byte columns to code-point columns."""

    def __init__(self, text: str) -> None:
        self._text = text

    @functools.cached_property
    def lines(self) -> list[str]:
        """Split when first read: most of a model file's statements are deferred and never look."""
        return split_lines(self._text)

    @classmethod
    def of_statement(cls, deferred: DeferredClass) -> Lines:
        """The lines a deferred statement's spans and suppression comment read, at their places in the file."""
        lines = cls("")
        above = [""] * (deferred.first_line - 1) + [deferred.line_above] if deferred.first_line else []
        lines.lines = above + split_lines(deferred.text)
        return lines

    def col(self, lineno: int, byte_col: int) -> int:
        if lineno - 1 >= len(self.lines):
            return byte_col
        line = self.lines[lineno - 1]
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def text(self, lineno: int) -> str:
        return self.lines[lineno - 1].strip() if 0 < lineno <= len(self.lines) else ""

    def name_span(self, lineno: int, keyword: str, name: str) -> Span:
        """Span of ``name`` after ``keyword`` (``class``/``def``) on a line, for definitions."""
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        after = line.find(keyword + " ")
        start = line.find(name, after + len(keyword)) if after >= 0 else -1
        if start < 0:
            start = len(line) - len(line.lstrip())
        return Span(lineno - 1, start, lineno - 1, start + len(name))

    def node_span(self, node: ast.AST) -> Span:
        return Span(node.lineno - 1, self.col(node.lineno, node.col_offset),
                    node.end_lineno - 1, self.col(node.end_lineno, node.end_col_offset))

    def attr_span(self, node: ast.Attribute) -> Span:
        end = self.col(node.end_lineno, node.end_col_offset)
        return Span(node.end_lineno - 1, end - len(node.attr), node.end_lineno - 1, end)


def chain_of(node: ast.AST) -> Chain | None:
    """The attribute chain an expression denotes, or None for anything else."""
    parts: list[str] = []
    while True:
        kind = type(node)  # parsed nodes: their types are never subclassed
        if kind is ast.Name:
            parts.append(node.id)
            return tuple(reversed(parts))
        if kind is ast.Attribute:
            parts.append(node.attr)
            node = node.value
        elif kind is ast.Subscript:
            parts.append("[]")
            node = node.value
        elif kind is ast.Call:
            parts.append("()")
            node = node.func
        else:
            return None


def dotted(chain: Chain) -> str:
    return ".".join(chain)
