"""A wrapper file as the stub generator reads it: ``ast`` once for the file, libcst for each class it edits.

libcst is slow (a whole module and its positions take it many times what CPython's parser takes) and walks code
recursively. It reads only the statement of each class edited, for the class's layout; where the statements
are, ``ast`` says. ``--fix`` on a file of many classes then costs in proportion to the file, not to the file
times its classes, and a class is edited whatever the rest of its file holds (code nested deeper than libcst
walks, an expression longer than its parser takes, elsewhere).
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from collections.abc import Sequence

import libcst as cst

from spec_contract.engine.edits.names import Names, TopLevel
from spec_contract.engine.edits.refusals import MAX_DEPTH, StubError, class_node, parsed, too_deep
from spec_contract.engine.text import LINE_BREAK, lines_with_ends

_LIBCST = "the stub generator (libcst) cannot read the class"


@functools.lru_cache(maxsize=2)
def wrapper_file(source: str) -> WrapperFile:
    """The file of this text, read once: the classes ``--fix`` edits in one file, and the code actions listed
    again and again on one buffer (a cursor move lists them), share it."""
    return WrapperFile(source)


class WrapperFile:
    """One wrapper file's text: its lines, line break, indentation, top-level names, and why each class asked
    for cannot be edited, if it cannot (the classes themselves are read again when asked for: a file of many
    would hold all their trees)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = lines_with_ends(source)
        self.newline = newline(source)
        self._refused: dict[str, str | None] = {}  # class → why it cannot be edited (None: it can)
        self._top: TopLevel | None = None

    def wrapper_class(self, dotted: str) -> WrapperClass:
        """The class ``A.B`` read by libcst (see :func:`refusals.class_node`), or :class:`StubError` saying why
        it cannot be edited; asked again, the same answer."""
        if self._refused.get(dotted) is not None:
            raise StubError(self._refused[dotted])
        try:
            read = WrapperClass(self, class_node(self.source, dotted), dotted)
        except StubError as err:
            self._refused[dotted] = str(err)
            raise
        self._refused[dotted] = None
        return read

    def refusal(self, dotted: str) -> str | None:
        """Why the class cannot be edited, or None: what the edit would say, known before it is made."""
        if dotted not in self._refused:
            try:
                self.wrapper_class(dotted)
            except StubError:
                pass
        return self._refused[dotted]

    def names(self, class_line: int) -> Names:
        """The module's names a member of the class on ``class_line`` (0-based) can use."""
        if self._top is None:
            tree = parsed(self.source)
            assert isinstance(tree, ast.Module)  # a class was found in it
            self._top = TopLevel(tree)
        return self._top.names(class_line)

    @functools.cached_property
    def default_indent(self) -> str:
        """The file's indentation unit as libcst takes it for a whole module: the first indented line's
        (four spaces in a file that indents nothing)."""
        try:
            for token in tokenize.generate_tokens(io.StringIO(self.source).readline):
                if token.type == tokenize.INDENT:
                    return token.string
        except (SyntaxError, tokenize.TokenError):
            pass
        return " " * 4


class WrapperClass:
    """One class statement, its decorators and its whole last line, parsed alone by libcst for its layout (an
    indented class, in an ``if`` block or in another class, under an ``if 1:`` of its own); where its statements
    are, ``ast`` says (the same places as libcst's positions, which would cost it more than the parse)."""

    def __init__(self, wrapper: WrapperFile, node: ast.ClassDef, dotted: str) -> None:
        if too_deep(node):
            raise StubError(f"the class nests expressions deeper than {MAX_DEPTH} levels; it is left alone")
        lines = wrapper.lines
        top = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        last = node.body[-1]
        self.line = node.lineno - 1  # of the ``class`` keyword
        self.last_end = _position(lines, last.end_lineno or last.lineno, last.end_col_offset or 0)
        self.first_start = _position(lines, node.body[0].lineno, node.body[0].col_offset)
        indented = node.col_offset > 0
        text = ("if 1:" + wrapper.newline if indented else "") + "".join(lines[top:line_after(lines, *self.last_end)])
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError as err:
            raise StubError(f"{_LIBCST}: {err.message}") from err
        except Exception as err:  # noqa: BLE001  libcst's own limits (its native parser's stack, …)
            raise StubError(f"{_LIBCST} ({type(err).__name__})") from err
        statement: cst.CSTNode | None = module.body[0] if module.body else None
        if indented and isinstance(statement, cst.If) and isinstance(statement.body, cst.IndentedBlock):
            statement = statement.body.body[0]
        if not isinstance(statement, cst.ClassDef) or statement.name.value != node.name:
            raise StubError(f"class {dotted} not found")  # the parsers disagree: better no edit than a wrong one
        self.node = statement
        self._default_indent = module.default_indent

    def indent(self, block: cst.IndentedBlock) -> str:
        """A block's own indentation, relative to its statement (libcst leaves it unset when it is the indentation
        it takes as the module's, here the text's)."""
        return block.indent if block.indent is not None else self._default_indent


def line_after(lines: Sequence[str], line: int, col: int) -> int:
    """The line after the logical line a statement ending at (``line``, ``col``) closes.

    A statement's position stops at the statement itself; what may follow it on its line is a ``;``, a
    comment, or a backslash that joins the next line (which then holds no more than that either)."""
    while line < len(lines):
        rest = lines[line][col:].rstrip("\r\n").rstrip(" \t\x0c")
        if not (rest.endswith("\\") and "#" not in rest):
            return line + 1
        line, col = line + 1, 0
    return line


def newline(source: str) -> str:
    match = LINE_BREAK.search(source)
    return match.group(0) if match else "\n"


def _position(lines: Sequence[str], line: int, offset: int) -> tuple[int, int]:
    """``ast``'s 1-based ``line`` and UTF-8 byte ``offset`` in it, as the 0-based line and code-point column."""
    text = lines[line - 1]
    return line - 1, len(text.encode("utf-8", "surrogatepass")[:offset].decode("utf-8", "ignore"))
