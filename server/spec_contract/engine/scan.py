"""Reading one file's ``ast`` into a :class:`~spec_contract.engine.summary.ModuleSummary`.

Model files contribute classes (bases, members, delegate attributes, ``__getattr__`` forwarding, suppression
comments); worker files additionally contribute per-function flow records: aliases, calls with their
argument chains, and every ``<chain>.<member>`` use with whether a guard on the same receiver and member
dominates it. Deciding which uses belong to the contract needs the whole tree and happens later, in
:mod:`spec_contract.engine.contract`. The scanner never imports or executes the file.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Container
from dataclasses import dataclass, field, replace
from typing import TypeVar

from spec_contract.engine.results import Span
from spec_contract.engine.summary import (CallFlow, Chain, ClassSummary, DeferredClass, Delegate, FunctionFlow,
                                          ImportBinding, Member, ModuleSummary, ParsedClass, Use)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_SUPPRESS = re.compile(r"#\s*spec-contract:\s*ignore(?:\[([A-Za-z0-9_,\s]*)\])?")
_PROPERTY_DECORATORS = {"property", "cached_property"}
_CATCHES_MISSING_ATTRIBUTE = {"AttributeError", "Exception", "BaseException"}

T = TypeVar("T")
Fact = tuple[str, str]  # (receiver chain as dotted text, member); ("*", "*") for "any AttributeError is caught"


def _split_lines(text: str) -> list[str]:
    """Lines as the parser counts them: ``str.splitlines`` also breaks at form feeds, ``\x1c``-``\x1e``,
    ``\x85`` and the Unicode line separators, which would shift every line after one."""
    return text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)


class _Lines:
    """Converts ``ast``'s UTF-8 byte columns to code-point columns."""

    def __init__(self, text: str) -> None:
        self._text = text

    @functools.cached_property
    def lines(self) -> list[str]:
        """Split when first read: most of a model file's statements are deferred and never look."""
        return _split_lines(self._text)

    @classmethod
    def of_statement(cls, deferred: DeferredClass) -> "_Lines":
        """The lines a deferred statement's spans and suppression comment read, at their places in the file."""
        lines = cls("")
        above = [""] * (deferred.first_line - 1) + [deferred.line_above] if deferred.first_line else []
        lines.lines = above + _split_lines(deferred.text)
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


def _dotted(chain: Chain) -> str:
    return ".".join(chain)


# A top-level statement starts on a line that begins with code: not indented, not a comment, not a closing
# bracket and not the continuation of a compound statement.
_TOP_LEVEL_LINE = re.compile(r"\n(?![\s#)\]}]|(?:else|elif|except|finally)\b)")
_TRIPLE_QUOTE = re.compile(r'"""|\'\'\'')
_CLASS_STATEMENT = re.compile(r"class\s+(\w+)")
_MERGES_BEFORE_REST = 4  # a statement that keeps failing to parse is parsed with the rest of the file


@dataclass(frozen=True)
class _Piece:
    """What one top-level statement contributes to its module's summary."""

    imports: tuple[ImportBinding, ...]
    local_imports: tuple[tuple[int, ImportBinding], ...]  # (line, binding) of imports inside functions and classes
    classes: tuple[ClassSummary, ...]
    assignments: tuple[tuple[str, Chain], ...]
    entries: tuple[tuple[bool, tuple[str, ...]], ...]  # (augmented, names) per entry-class assignment
    functions: tuple[FunctionFlow, ...]


class StatementMemo:
    """The pieces of one file's last scan, so that scanning its next text re-reads only what an edit touched.

    A piece is keyed by its statement's text and the line above it (where a suppression comment for a class
    may sit); every other input of a piece lies inside the statement, and its first line only numbers what it
    holds. The language server keeps one memo per open buffer: a keystroke in a 3,000-line model file then
    parses one statement, not the file, and a new line moves the statements below it without parsing them.
    """

    def __init__(self) -> None:
        self.pieces: dict[tuple[str, str], tuple[int, _Piece]] = {}  # (text, line above) → (first line, piece)
        # Statements of the class bodies parsed last time, by (first line, text): see ``_parse_by_member``
        self.members: dict[tuple[int, str], list[ast.stmt]] = {}
        self.context: tuple[bool, str | None] | None = None  # (worker, entry variable) the pieces were made for


def scan(path: str, module: str, digest: str, text: str, *, worker: bool, entry_variable: str | None,
         memo: StatementMemo | None = None) -> ModuleSummary:
    """Summarise one file; a syntax error gives an empty summary with ``error`` set.

    The file is split into top-level statements (see :func:`_top_level`). With a ``memo`` (an editor buffer)
    each is a piece of its own, and those unchanged since the memo's last scan are not parsed again. Without
    one, a model file's class statements are deferred (see :class:`DeferredClass`) and the statements
    between them parsed together; a worker file is parsed whole.
    """
    is_package = path.endswith("__init__.py")
    lines = _Lines(text)
    reusable = memo is not None and memo.context == (worker, entry_variable)
    previous = memo.pieces if reusable else {}
    pieces: list[_Piece] = []  # in file order
    made: dict[tuple[str, str], tuple[int, _Piece]] = {}  # the memo's next pieces
    deferred: list[DeferredClass] = []
    parsed_classes = 0
    # A model file read from disk defers its classes; an editor buffer is read whole, so that a syntax error
    # anywhere shows at once and hover and actions find every class parsed.
    lazy = not worker and memo is None
    members: dict[tuple[int, str], list[ast.stmt]] = {}  # the memo's next class body statements

    def parse(statement: str, line: int) -> list[ast.stmt]:
        """An editor buffer's statement: a changed class is parsed one body statement at a time."""
        if statement.startswith(("class", "@")):
            body = _parse_by_member(statement, line, path, memo.members if reusable else {}, members)
            if body is not None:
                return body
        return _parse(statement, line, path)

    try:
        for key, body in _top_level(text, previous, lazy=lazy, per_statement=memo is not None, filename=path,
                                    parse=parse if memo is not None else None):
            if body is None and key[1:] in previous:
                line, piece = previous[key[1:]]  # shifting what it holds costs a fraction of parsing it
                piece = piece if line == key[0] else moved_below(piece, 0, key[0] - line)
            elif body is not None:
                piece = _piece(body, lines, worker, entry_variable, key[1])
            else:
                if name := _CLASS_STATEMENT.match(key[1]):
                    deferred.append(DeferredClass(name.group(1), key[0], key[1], key[2], parsed_classes,
                                                  _import_words(key[1])))
                continue
            pieces.append(piece)
            parsed_classes += len(piece.classes)
            if memo is not None:
                made[key[1:]] = (key[0], piece)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return ModuleSummary(path, module, digest, (), (), (), None, (), is_package, error=_error_message(exc))
    if memo is not None:
        memo.pieces, memo.context = made, (worker, entry_variable)
        # Class statements not parsed this time keep their body statements for the next edit in them, as long
        # as each still stands at its line (a statement that moved is parsed again)
        kept = memo.members if reusable else {}
        if kept:
            starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)] if "\r" in text \
                else list(itertools.accumulate((len(line) + 1 for line in lines.lines), initial=0))
            kept = {key: nodes for key, nodes in kept.items()
                    if key not in members and key[0] < len(starts) and text.startswith(key[1], starts[key[0]])}
        memo.members = kept | members
    entry: list[str] | None = None
    for piece in pieces:
        for augmented, names in piece.entries:
            entry = (entry or []) + list(names) if augmented else list(names)
    summary = ModuleSummary(path, module, digest, tuple(b for p in pieces for b in p.imports),
                            tuple(c for p in pieces for c in p.classes),
                            tuple(a for p in pieces for a in p.assignments),
                            tuple(entry) if entry is not None else None,
                            tuple(f for p in pieces for f in p.functions), is_package,
                            deferred=tuple(deferred),
                            local_imports=tuple(b for p in pieces for b in p.local_imports))
    if entry:
        _parse_registered(summary)
    return summary


def _parse_registered(summary: ModuleSummary) -> None:
    """Parse now the deferred classes a check will ask for first: the registered ones and, within the file,
    their bases and inner models (``self.model = DeepseekV2Model(...)``), so that the work happens where the
    file is scanned (on the cold run's other cores) rather than later, one class at a time."""
    wanted, seen = set(summary.entry_classes), set()
    while wanted - seen:
        names = wanted - seen
        seen |= names
        for cls in summary.top_level_classes(names):
            wanted.update(chain[0] for chain in cls.bases)
            wanted.update(d.callee[0] for d in cls.delegates)


def parse_deferred(deferred: DeferredClass, path: str) -> ParsedClass:
    """What a class statement :func:`scan` deferred holds: its classes (the class, then those nested in it)
    and the imports inside its methods, or its syntax error."""
    lines = _Lines.of_statement(deferred)
    try:
        body = _parse(deferred.text, deferred.first_line, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return ParsedClass((), (), _error_message(exc))
    piece = _piece(body, lines, False, None, deferred.text)
    return ParsedClass(piece.classes, piece.local_imports, None)


def _error_message(exc: BaseException) -> str:
    where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
    return f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}{where}"


def _top_level(text: str, known: Container[tuple[str, str]], *, lazy: bool = False,
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
    :func:`_parse`), which costs a little for every line above it; with ``parse``, a piece of one or more
    statements is parsed by it (given the text and first line), which must give what ``_parse`` gives.
    """
    parse = parse or (lambda statement, line: _parse(statement, line, filename))
    if not per_statement and not lazy:
        return [((0, text, ""), _parse(text, 0, filename))]
    starts = _statement_starts(text) + [len(text)]
    deferrable = [lazy and _deferrable(text[starts[k]:starts[k + 1]]) for k in range(len(starts) - 1)]
    out: list[tuple[tuple[int, str, str], list[ast.stmt] | None]] = []
    i, line = 0, 0
    while i < len(starts) - 1:
        previous_line = text[text.rfind("\n", 0, starts[i] - 1) + 1:starts[i] - 1] if starts[i] else ""
        j, body = i + 1, None
        if not per_statement and not deferrable[i]:  # the run of statements up to the next deferred one
            while j < len(starts) - 1 and not deferrable[j]:
                j += 1
            try:
                body = _parse(text[starts[i]:starts[j]], line, filename)
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
                    return [((0, text, ""), _parse(text, 0, filename))]
                j = j + 1 if j - i < _MERGES_BEFORE_REST else len(starts) - 1
                statement = text[starts[i]:starts[j]]
        out.append(((line, statement, previous_line), body))
        line += statement.count("\n")
        i = j
    return out


def _deferrable(statement: str) -> bool:
    """A model file's statement whose parsing can wait (a class) or be skipped (a function without imports).

    An import inside a function binds a name the module's other code may be resolved through (see
    :meth:`~spec_contract.engine.summary.ModuleSummary.local_import`): such a function is parsed now, and a
    class when a name it may import is looked up.

    Neither is parsed here, so neither confirms that the split before the next statement was right; a wrong
    one makes some later statement fail to parse, and the file is then parsed whole (see ``_top_level``).
    """
    if statement.startswith("class"):
        return _CLASS_STATEMENT.match(statement) is not None
    return statement.startswith(("def ", "async def ")) and "import" not in statement


# What may stand between the ``import`` keyword and the first imported name
_AFTER_IMPORT = re.compile(r"(?:[ \t]|\\\r?\n)*")
_LOGICAL_LINE_END = re.compile(r"(?<!\\)\r?\n")
_WORD = re.compile(r"\w+")


def _import_words(text: str) -> frozenset[str]:
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
        start = _AFTER_IMPORT.match(text, found + 6).end()
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


def _statement_starts(text: str, indent: str = "") -> list[int]:
    """Offsets where statements may start (see :func:`_top_level`): top-level ones, or with ``indent`` those
    of a block indented so (``text`` then starts at one)."""
    if text.count("\r") != text.count("\r\n"):
        return [0]  # a lone carriage return ends a line for the parser but not for the line count here
    line_start = _TOP_LEVEL_LINE if not indent else _block_line(indent)
    candidates = [0] + [m.end() for m in line_start.finditer(text) if m.end() < len(text)]
    strings: list[tuple[int, int]] = []  # triple-quoted strings, paired naively: a miss only costs a merge
    quote = None
    for match in _TRIPLE_QUOTE.finditer(text):
        if quote is None:
            quote, opened = match.group(), match.start()
        elif match.group() == quote:
            strings.append((opened, match.end()))
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
    return starts


@functools.lru_cache(maxsize=16)
def _block_line(indent: str) -> re.Pattern[str]:
    """A line that starts a statement of a block indented by ``indent`` (as ``_TOP_LEVEL_LINE`` at the top)."""
    return re.compile(r"\n(?=" + re.escape(indent) + r"(?![\s#)\]}]|(?:else|elif|except|finally)\b))")


# A line that may end a class statement's header, and the first indented line of code after it
_HEADER_END = re.compile(r":[ \t]*(?:#[^\r\n]*)?\r?$", re.MULTILINE)
_INDENTED_CODE = re.compile(r"^([ \t]+)[^\s#]", re.MULTILINE)
_HEADER_TRIES = 4


def _parse_by_member(statement: str, first_line: int, filename: str, known: dict[tuple[int, str], list[ast.stmt]],
                     made: dict[tuple[int, str], list[ast.stmt]]) -> list[ast.stmt] | None:
    """A class statement parsed one body statement at a time, each found in ``known`` or parsed and put in
    ``made`` (keyed by first line and text); None where it does not split so, for the caller to parse it whole.

    The header (decorators, ``class X(...):``) is the text up to the first indented line of code after a
    line ending in ``:``; it must parse with a ``pass`` body. The body is split as the file is (see
    :func:`_top_level`), at lines with the body's indentation, and each piece must parse on its own inside a
    class of its own: so each ends where the tokenizer is back at the body's level, and the pieces are exactly
    the statements of the whole class. An editor keystroke in a method of a 1,300-line class then parses that
    method, not the class.
    """
    for tries, header_end in enumerate(_HEADER_END.finditer(statement)):
        code = _INDENTED_CODE.search(statement, header_end.end())
        if tries == _HEADER_TRIES or code is None:
            return None
        start, indent = code.start(), code.group(1)
        header = statement[:start]
        try:
            module = _parse(header + indent + "pass\n", first_line, filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if len(module) == 1 and type(module[0]) is ast.ClassDef and len(module[0].body) == 1:
            break
    else:
        return None
    cls, body = module[0], statement[start:]
    starts = _statement_starts(body, indent) + [len(body)]
    members: list[ast.stmt] = []
    i, line = 0, first_line + header.count("\n")
    while i < len(starts) - 1:
        j = i + 1
        while (nodes := _member(body[starts[i]:starts[j]], line, filename, known)) is None:
            if j == len(starts) - 1:
                return None
            j = j + 1 if j - i < _MERGES_BEFORE_REST else len(starts) - 1
        piece = body[starts[i]:starts[j]]
        made[(line, piece)] = nodes
        members.extend(nodes)
        line += piece.count("\n")
        i = j
    cls.body = members
    cls.end_lineno, cls.end_col_offset = members[-1].end_lineno, members[-1].end_col_offset
    return [cls]


def _member(piece: str, line: int, filename: str, known: dict[tuple[int, str], list[ast.stmt]]
            ) -> list[ast.stmt] | None:
    """The statements of one piece of a class body, from ``known`` or parsed inside a class of its own
    (placed on the line above the piece, so that lines come out as in the file); None if it does not parse
    alone."""
    nodes = known.get((line, piece))
    if nodes is not None:
        return nodes
    try:
        module = _parse("class _:\n" + piece, line - 1, filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return module[0].body if len(module) == 1 and type(module[0]) is ast.ClassDef else None


def _parse(statement: str, first_line: int, filename: str) -> list[ast.stmt]:
    """Parse a top-level statement where it stands in its file: line numbers come out as in the whole file."""
    return ast.parse("\n" * first_line + statement, filename=filename).body


def _piece(body: list[ast.stmt], lines: _Lines, worker: bool, entry_variable: str | None, text: str) -> _Piece:
    """What the statements ``body``, parsed from ``text``, contribute to their module's summary."""
    imports: list[ImportBinding] = []
    assignments: list[tuple[str, Chain]] = []
    entries: list[tuple[bool, tuple[str, ...]]] = []
    classes: list[ClassSummary] = []
    functions: list[FunctionFlow] = []

    def module_level(stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        imports.append(ImportBinding(alias.asname, alias.name, None, 0))
                    else:
                        top = alias.name.split(".")[0]
                        imports.append(ImportBinding(top, top, None, 0))
            elif isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    imports.append(ImportBinding(alias.asname or alias.name, stmt.module or "", alias.name, stmt.level))
            elif isinstance(stmt, ast.ClassDef):
                _class(stmt, "", lines, classes, functions if worker else None)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if worker:
                    functions.append(_function_flow(stmt, stmt.name, None, lines))
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name) and stmt.value is not None:
                        if target.id == entry_variable:
                            entries.append((isinstance(stmt, ast.AugAssign), tuple(_entry_names(stmt.value))))
                        else:
                            value = chain_of(stmt.value)
                            if value is not None and "()" not in value and "[]" not in value:
                                assignments.append((target.id, value))
            elif isinstance(stmt, ast.If):
                module_level(stmt.body)
                module_level(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                module_level(stmt.body)
                for handler in stmt.handlers:
                    module_level(handler.body)
                module_level(stmt.orelse)
                module_level(stmt.finalbody)

    module_level(body)
    top = set(map(id, body))
    local_imports = [(node.lineno, ImportBinding(alias.asname or alias.name, node.module or "", alias.name, node.level))
                     for node in (_statements(body, into_classes=True) if "import" in text else ())
                     if isinstance(node, ast.ImportFrom) and id(node) not in top
                     for alias in node.names if alias.name != "*"]
    return _Piece(tuple(imports), tuple(local_imports), tuple(classes), tuple(assignments), tuple(entries),
                  tuple(functions))


def moved_below(held: T, first: int, lines: int) -> T:
    """What a piece or a summary (``held``) holds, with every position from line ``first`` on moved down by
    ``lines`` (up when negative): what a new or deleted line above them does."""
    classes = tuple(replace(cls, span=cls.span.moved(first, lines),
                            members=tuple(replace(m, span=m.span.moved(first, lines)) for m in cls.members),
                            delegates=tuple(replace(d, span=d.span.moved(first, lines)) for d in cls.delegates))
                    for cls in held.classes)
    functions = tuple(replace(fn, uses=tuple(replace(use, span=use.span.moved(first, lines)) for use in fn.uses))
                      for fn in held.functions)
    return replace(held, classes=classes, functions=functions,
                   local_imports=tuple((line + lines if line >= first else line, binding)
                                       for line, binding in held.local_imports))


def moved_by(before: ModuleSummary, after: ModuleSummary) -> tuple[int, int] | None:
    """``(first, lines)`` when ``after`` holds what ``before`` holds with every position from line ``first``
    on moved by ``lines`` (see :func:`moved_below`), else None.

    Only summaries made whole (editor buffers: no class deferred) and without flow records are compared.
    """
    if before.deferred or after.deferred or before.functions or after.functions:
        return None
    old, new = _positions(before), _positions(after)
    moved = [(was, now) for was, now in zip(old, new) if was != now]
    if len(old) != len(new) or not moved:
        return None
    first, lines = min(was for was, _ in moved), moved[0][1] - moved[0][0]
    return (first, lines) if moved_below(before, first, lines) == after else None


def _positions(summary: ModuleSummary) -> list[int]:
    """The line of every position a summary without flow records holds, in one fixed order."""
    return [line for cls in summary.classes
            for line in (cls.span.line, *(m.span.line for m in cls.members), *(d.span.line for d in cls.delegates))
            ] + [line for line, _ in summary.local_imports]


def _entry_names(value: ast.expr) -> list[str]:
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return [e.id if isinstance(e, ast.Name) else e.attr for e in value.elts if isinstance(e, (ast.Name, ast.Attribute))]
    if isinstance(value, ast.Name):
        return [value.id]
    if isinstance(value, ast.Attribute):
        return [value.attr]
    if isinstance(value, ast.BinOp):
        return _entry_names(value.left) + _entry_names(value.right)
    return []


def _suppressed(lines: _Lines, node: ast.ClassDef) -> frozenset[str]:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    codes: set[str] = set()
    for lineno in {node.lineno, first - 1}:
        if 0 < lineno <= len(lines.lines):
            match = _SUPPRESS.search(lines.lines[lineno - 1])
            if match:
                listed = [c.strip() for c in (match.group(1) or "").split(",") if c.strip()]
                codes.update(listed or ["*"])
    return frozenset(codes)


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for deco in node.decorator_list:
        chain = chain_of(deco.func if isinstance(deco, ast.Call) else deco)
        if chain:
            names.add(chain[-1])
            if len(chain) >= 2 and chain[-1] in ("setter", "getter", "deleter"):
                names.add("accessor")
    return names


def _arg_bounds(node: ast.FunctionDef | ast.AsyncFunctionDef, drop_first: bool) -> tuple[int, int | None]:
    positional = node.args.posonlyargs + node.args.args
    count = len(positional) - (1 if drop_first and positional else 0)
    required = count - len(node.args.defaults)
    return max(required, 0), None if node.args.vararg else count


def _class(node: ast.ClassDef, outer: str, lines: _Lines, out: list[ClassSummary],
           functions: list[FunctionFlow] | None) -> None:
    qualname = f"{outer}.{node.name}" if outer else node.name
    members: dict[str, Member] = {}
    delegates: list[Delegate] = []
    aliases: list[tuple[str, str]] = []
    getattr_forward: str | None = None
    instance_attrs: dict[str, Member] = {}
    factories: list[tuple[str, tuple[Chain, ...]]] = []

    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = _decorator_names(stmt)
            span = lines.name_span(stmt.lineno, "def", stmt.name)
            if "accessor" in decorators:
                continue
            if decorators & _PROPERTY_DECORATORS:
                members.setdefault(stmt.name, Member(stmt.name, "property", span))
                returned = _returned_self_attr(stmt)
                if returned:
                    aliases.append((stmt.name, returned))
            else:
                kind = "async_method" if isinstance(stmt, ast.AsyncFunctionDef) else "method"
                low, high = _arg_bounds(stmt, drop_first="staticmethod" not in decorators)
                members[stmt.name] = Member(stmt.name, kind, span, low, high)
            if stmt.name == "__getattr__":
                getattr_forward = _getattr_target(stmt)
            # Only assignments and returns tell what a method builds: pick them out once
            statements = [s for s in _statements(stmt.body) if type(s) in _BUILDS]
            made = _returned_constructors(statements)
            if made:
                factories.append((stmt.name, made))
            local_classes = _local_classes(stmt, statements)
            for sub in statements:
                _collect_self_assignment(sub, lines, instance_attrs, delegates, local_classes)
            if functions is not None:
                functions.append(_function_flow(stmt, f"{qualname}.{stmt.name}", qualname, lines))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for name_node in _names_in_target(target):
                    members.setdefault(name_node.id, Member(name_node.id, "class_attribute", lines.node_span(name_node)))
        elif isinstance(stmt, ast.ClassDef):
            members.setdefault(stmt.name, Member(stmt.name, "class_attribute", lines.name_span(stmt.lineno, "class", stmt.name)))
            _class(stmt, qualname, lines, out, functions)
    for name, member in instance_attrs.items():
        members.setdefault(name, member)
    bases = tuple(c for c in (chain_of(b) for b in node.bases) if c is not None)
    out.append(ClassSummary(
        name=node.name, qualname=qualname, span=lines.name_span(node.lineno, "class", node.name), bases=bases,
        members=tuple(members.values()), delegates=tuple(delegates), attr_aliases=tuple(aliases),
        getattr_forward=getattr_forward, factories=tuple(factories), suppressed=_suppressed(lines, node),
    ))


def _names_in_target(target: ast.expr) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _names_in_target(elt)]
    return []


REGISTRY = ("<registry>",)  # a delegate callee whose class the engine's model registry picks at run time
# Calls that look a model class up (``_get_sgl_model_cls``, ``ModelRegistry.resolve_model_cls``), as opposed
# to other computed callables (``partial(nn.LayerNorm, …)``, a backend's own ``get_arch``).
_REGISTRY_LOOKUP = re.compile(r"model_?(?:cls|class)|resolve_model|registry", re.IGNORECASE)


def _local_classes(node: ast.FunctionDef | ast.AsyncFunctionDef, statements: list[ast.stmt]) -> dict[str, list[Chain]]:
    """What a local name called as a constructor may stand for, inside one method.

    ``language_model_cls=Qwen3LLMModel`` (a parameter default) stands for that class;
    ``language_model_cls = self._get_sgl_model_cls(config)`` (a name computed by a call) stands for whatever
    the model registry returns, :data:`REGISTRY`.
    """
    out: dict[str, list[Chain]] = {}
    positional = node.args.posonlyargs + node.args.args
    defaults = list(zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults))
    defaults += [(a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
    for arg, default in defaults:
        chain = chain_of(default)
        if chain is not None and "()" not in chain and "[]" not in chain and chain[-1][:1].isupper():
            out.setdefault(arg.arg, []).append(chain)
    for stmt in statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = stmt.value
            if isinstance(value, ast.Subscript):
                value = value.value  # ``ModelRegistry.resolve_model_cls(arch)[0]``
            if isinstance(value, ast.Call):
                callee = chain_of(value.func)
                if callee is not None and any(_REGISTRY_LOOKUP.search(part) for part in callee):
                    out.setdefault(stmt.targets[0].id, []).append(REGISTRY)
    return out


def _collect_self_assignment(node: ast.AST, lines: _Lines, attrs: dict[str, Member], delegates: list[Delegate],
                             local_classes: dict[str, list[Chain]]) -> None:
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign):
        targets, value = [node.target], node.value
    else:
        return
    for target in targets:
        for sub in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                span = lines.attr_span(sub)
                attrs.setdefault(sub.attr, Member(sub.attr, "instance_attribute", span))
                if sub is target:
                    for call in _possible_calls(value):
                        callee = chain_of(call.func)
                        if callee is None or "()" in callee or "[]" in callee:
                            continue
                        for chain in local_classes.get(callee[0], [callee]) if len(callee) == 1 else [callee]:
                            delegates.append(Delegate(sub.attr, chain, span))


def _possible_calls(value: ast.expr | None) -> list[ast.Call]:
    """The constructor calls an assigned value may come from: ``A(c) if cond else B(c)``, ``x or A(c)``."""
    if isinstance(value, ast.Call):
        return [value]
    if isinstance(value, ast.IfExp):
        return _possible_calls(value.body) + _possible_calls(value.orelse)
    if isinstance(value, ast.BoolOp):
        return [call for operand in value.values for call in _possible_calls(operand)]
    return []


_COMPOUND = frozenset(getattr(ast, name) for name in (
    "If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar", "FunctionDef", "AsyncFunctionDef",
    "ClassDef", "Match") if hasattr(ast, name))  # statements with blocks inside (node types are never subclassed)
_BUILDS = frozenset({ast.Assign, ast.AnnAssign, ast.Return})
_TRY = frozenset(getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name))
_MATCH = getattr(ast, "Match", None)


def _statements(body: list[ast.stmt], into_classes: bool = False) -> list[ast.stmt]:
    """Every statement in a body, nested blocks included (each statement, then its body, ``else``, ``finally``,
    ``except`` handlers and ``case`` blocks), without descending into expressions.

    Walking statements only (not every expression node, as ``ast.walk`` does) is what keeps summarising
    a model file close to the cost of parsing it.
    """
    out: list[ast.stmt] = []
    pending = body[::-1]
    while pending:
        stmt = pending.pop()
        out.append(stmt)
        if type(stmt) not in _COMPOUND or (type(stmt) is ast.ClassDef and not into_classes):
            continue
        inner = [*getattr(stmt, "body", ()), *getattr(stmt, "orelse", ()), *getattr(stmt, "finalbody", ())]
        for handler in getattr(stmt, "handlers", ()):
            inner.extend(handler.body)
        for case in getattr(stmt, "cases", ()):
            inner.extend(case.body)
        pending.extend(reversed(inner))
    return out


def _returned_constructors(statements: list[ast.stmt]) -> tuple[Chain, ...]:
    """Classes a factory method returns instances of: ``return Qwen2ForCausalLM(...)``, or a local built so."""
    built: dict[str, list[ast.Call]] = {}
    returned: list[Chain] = []
    for sub in statements:
        if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
            built.setdefault(sub.targets[0].id, []).extend(_possible_calls(sub.value))
    for sub in statements:
        if isinstance(sub, ast.Return) and sub.value is not None:
            calls = _possible_calls(sub.value)
            if isinstance(sub.value, ast.Name):
                calls = built.get(sub.value.id, [])
            for call in calls:
                chain = chain_of(call.func)
                if chain is not None and "()" not in chain and "[]" not in chain and chain[0] != "self" \
                        and chain[-1][:1].isupper():  # a class being instantiated, by naming convention
                    returned.append(chain)
    return tuple(dict.fromkeys(returned))


def _returned_self_attr(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        chain = chain_of(body[0].value)
        if chain and len(chain) >= 2 and chain[0] == "self" and "()" not in chain and "[]" not in chain:
            return ".".join(chain[1:])
    return None


def _getattr_target(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """What ``__getattr__`` forwards to: an attribute name, "" when unknown, None when it only raises."""
    returns = False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "getattr" and sub.args:
            chain = chain_of(sub.args[0])
            if chain and len(chain) == 2 and chain[0] == "self":
                return chain[1]
        if isinstance(sub, ast.Return) and sub.value is not None:
            returns = True
    return "" if returns else None


# ---------------------------------------------------------------------------------------------- flow

@dataclass
class _Context:
    facts: frozenset[Fact] = frozenset()
    conditions: frozenset[str] = frozenset()

    def add(self, facts: frozenset[Fact] = frozenset(), conditions: frozenset[str] = frozenset()) -> "_Context":
        return _Context(self.facts | facts, self.conditions | conditions)


@dataclass
class _FlowBuilder:
    lines: _Lines
    aliases: list[tuple[Chain, Chain]] = field(default_factory=list)
    calls: list[CallFlow] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)

    # statements -------------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], ctx: _Context) -> None:
        for stmt in stmts:
            ctx = self.stmt(stmt, ctx)

    def stmt(self, stmt: ast.stmt, ctx: _Context) -> _Context:
        """Visit one statement; returns the context for the statements after it."""
        kind = type(stmt)
        if kind is ast.Expr:  # the commonest statements first
            self.expr(stmt.value, ctx)
            return ctx
        if kind is ast.Return:
            if stmt.value is not None:
                self.expr(stmt.value, ctx)
            return ctx
        if kind is ast.Assign:
            self.expr(stmt.value, ctx)
            for target in stmt.targets:
                self._assign(target, stmt.value)
                self._visit_target(target, ctx)
            return ctx
        if kind is ast.If:
            self.expr(stmt.test, ctx)
            positive, negative = _facts(stmt.test)
            names = _names(stmt.test)
            self.block(stmt.body, ctx.add(positive, names))
            # ``if not hasattr(m, "x"): raise …`` asserts the member: the else branch is not guarded by it.
            self.block(stmt.orelse, ctx.add(frozenset() if _raises(stmt.body) else negative, names))
            if _exits_quietly(stmt.body):
                return ctx.add(negative)
            if stmt.orelse and _exits_quietly(stmt.orelse):
                return ctx.add(positive)
            return ctx
        if kind in _TRY:
            protected = any(_catches_attribute_error(h) and not _reraises(h) for h in stmt.handlers)
            self.block(stmt.body, ctx.add(frozenset({("*", "*")})) if protected else ctx)
            for handler in stmt.handlers:
                self.block(handler.body, ctx)
            self.block(stmt.orelse, ctx)
            self.block(stmt.finalbody, ctx)
            return ctx
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.expr(stmt.iter, ctx)
            source = chain_of(stmt.iter)
            if source is not None:
                self._bind(stmt.target, source + ("[]",))
            self.block(stmt.body, ctx)
            self.block(stmt.orelse, ctx)
            return ctx
        if isinstance(stmt, ast.While):
            self.expr(stmt.test, ctx)
            self.block(stmt.body, ctx.add(conditions=_names(stmt.test)))
            self.block(stmt.orelse, ctx)
            return ctx
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.expr(item.context_expr, ctx)
            self.block(stmt.body, ctx)
            return ctx
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.block(stmt.body, ctx)  # closures see the enclosing function's names
            return ctx
        if isinstance(stmt, ast.ClassDef):
            return ctx
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            if stmt.value is not None:
                self.expr(stmt.value, ctx)
                if isinstance(stmt, ast.AnnAssign):
                    self._assign(stmt.target, stmt.value)
            self._visit_target(stmt.target, ctx)
            return ctx
        if kind is _MATCH:
            self.expr(stmt.subject, ctx)
            for case in stmt.cases:
                self.block(case.body, ctx)
            return ctx
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                self.expr(child, ctx)
        return ctx

    def _visit_target(self, target: ast.expr, ctx: _Context) -> None:
        """Reads inside an assignment target (``a.b.c = x`` reads ``a.b``)."""
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            self.expr(target.value, ctx)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._visit_target(elt, ctx)

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts):
            for t, v in zip(target.elts, value.elts):
                self._assign(t, v)
            return
        if isinstance(value, ast.IfExp):
            self._assign(target, value.body)
            self._assign(target, value.orelse)
            return
        if isinstance(value, ast.BoolOp):
            for operand in value.values:
                self._assign(target, operand)
            return
        source = chain_of(value)
        if source is not None:
            self._bind(target, source)

    def _bind(self, target: ast.expr, source: Chain) -> None:
        name = chain_of(target)
        if name is not None and (len(name) == 1 or (len(name) == 2 and name[0] == "self")):
            self.aliases.append((name, source))

    # expressions ------------------------------------------------------------------------------
    def expr(self, node: ast.expr, ctx: _Context) -> None:
        kind = type(node)
        if kind is ast.Name or kind is ast.Constant:  # most nodes: nothing to record, nothing inside
            return
        if kind is ast.Call:
            self._call(node, ctx)
            return
        if kind is ast.Attribute:
            self._use(node, ctx, is_call=False, arity=None)
            self.expr(node.value, ctx)
            return
        if isinstance(node, ast.BoolOp):
            current = ctx
            for operand in node.values:
                self.expr(operand, current)
                positive, negative = _facts(operand)
                current = current.add(positive if isinstance(node.op, ast.And) else negative)
            return
        if isinstance(node, ast.IfExp):
            self.expr(node.test, ctx)
            positive, negative = _facts(node.test)
            self.expr(node.body, ctx.add(positive))
            self.expr(node.orelse, ctx.add(negative))
            return
        if isinstance(node, ast.Lambda):
            self.expr(node.body, ctx)
            return
        for child in _children(node):
            if isinstance(child, ast.expr):
                self.expr(child, ctx)
            elif isinstance(child, ast.comprehension):
                self.expr(child.iter, ctx)
                source = chain_of(child.iter)
                if source is not None:
                    self._bind(child.target, source + ("[]",))
                for cond in child.ifs:
                    self.expr(cond, ctx)

    def _call(self, node: ast.Call, ctx: _Context) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            receiver = chain_of(node.args[0])
            if func.id == "getattr" and receiver is not None:
                member = node.args[1].value
                guarded = len(node.args) >= 3 or any(k.arg == "default" for k in node.keywords) \
                    or _is_guarded(ctx, receiver, member)
                span = self.lines.node_span(node.args[1])
                self.uses.append(Use(receiver, member, span, False, None, guarded, ctx.conditions,
                                     self.lines.text(node.lineno)))
            for arg in node.args:
                self.expr(arg, ctx)
            return
        args = node.args
        arity = None if node.keywords or any(type(a) is ast.Starred for a in args) else len(args)
        if type(func) is ast.Attribute:
            self._use(func, ctx, is_call=True, arity=arity)
            self.expr(func.value, ctx)
        else:
            self.expr(func, ctx)
        if args or node.keywords:  # a call without arguments binds no parameter
            callee = chain_of(func)
            if callee is not None:
                chains = tuple([None if type(a) is ast.Starred else chain_of(a) for a in args])
                kwargs = tuple([(k.arg, c) for k in node.keywords if k.arg and (c := chain_of(k.value)) is not None])
                if kwargs or chains.count(None) != len(chains):
                    self.calls.append(CallFlow(callee, chains, kwargs))
        for arg in args:
            self.expr(arg.value if type(arg) is ast.Starred else arg, ctx)
        for keyword in node.keywords:
            self.expr(keyword.value, ctx)

    def _use(self, node: ast.Attribute, ctx: _Context, *, is_call: bool, arity: int | None) -> None:
        if type(node.ctx) is not ast.Load:
            return
        receiver = chain_of(node.value)
        if receiver is None:
            return
        span = self.lines.attr_span(node)
        self.uses.append(Use(receiver, node.attr, span, is_call, arity, _is_guarded(ctx, receiver, node.attr),
                             ctx.conditions, self.lines.text(node.end_lineno)))


def _children(node: ast.AST):
    """``ast.iter_child_nodes`` without its per-field ``isinstance`` on the common expression kinds."""
    kind = type(node)
    if kind is ast.Subscript:
        return node.value, node.slice
    if kind is ast.BinOp:
        return node.left, node.right
    if kind is ast.Compare:
        return [node.left, *node.comparators]
    if kind is ast.Tuple or kind is ast.List or kind is ast.Set:
        return node.elts
    if kind is ast.UnaryOp:
        return (node.operand,)
    return ast.iter_child_nodes(node)


def _is_guarded(ctx: _Context, receiver: Chain, member: str) -> bool:
    if not ctx.facts:  # most code is under no guard at all
        return False
    dotted = _dotted(receiver)
    return ("*", "*") in ctx.facts or (dotted, member) in ctx.facts or (dotted, "*") in ctx.facts


def _facts(test: ast.expr) -> tuple[frozenset[Fact], frozenset[Fact]]:
    """Guards known when ``test`` is true, and when it is false."""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and len(test.args) >= 2:
        if test.func.id == "hasattr" and isinstance(test.args[1], ast.Constant) and isinstance(test.args[1].value, str):
            receiver = chain_of(test.args[0])
            if receiver is not None:
                return frozenset({(_dotted(receiver), test.args[1].value)}), frozenset()
        if test.func.id in ("getattr",) and isinstance(test.args[1], ast.Constant) and isinstance(test.args[1].value, str):
            receiver = chain_of(test.args[0])  # ``if getattr(m, "x", None):`` — m.x exists in the body
            if receiver is not None and len(test.args) >= 3:
                return frozenset({(_dotted(receiver), test.args[1].value)}), frozenset()
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "callable" and test.args:
        return _facts(test.args[0])
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" and test.args:
        receiver = chain_of(test.args[0])  # a runtime-checkable Protocol or a class: every member is vouched for
        if receiver is not None:
            return frozenset({(_dotted(receiver), "*")}), frozenset()
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        positive, _ = _facts(test.left)  # ``getattr(m, "x", None) is not None``
        return (positive, frozenset()) if isinstance(test.ops[0], ast.IsNot) else (frozenset(), positive)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        positive, negative = _facts(test.operand)
        return negative, positive
    if isinstance(test, ast.BoolOp):
        parts = [_facts(v) for v in test.values]
        if isinstance(test.op, ast.And):
            return frozenset().union(*(p for p, _ in parts)), frozenset()
        return frozenset(), frozenset().union(*(n for _, n in parts))
    return frozenset(), frozenset()


def _names(test: ast.expr) -> frozenset[str]:
    out = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
    return frozenset(out)


def _raises(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _exits_quietly(body: list[ast.stmt]) -> bool:
    """Ends in return/continue/break: code after the ``if`` only runs when the test was false.

    A ``raise`` does not count: ``if not hasattr(m, "x"): raise ...`` asserts the member, the call stays
    required.
    """
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Continue, ast.Break))


def _catches_attribute_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((chain_of(k) or ("",))[-1] in _CATCHES_MISSING_ATTRIBUTE for k in kinds)


def _reraises(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(node, ast.Raise) for stmt in handler.body for node in ast.walk(stmt))


def _function_flow(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, class_name: str | None,
                   lines: _Lines) -> FunctionFlow:
    builder = _FlowBuilder(lines)
    for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
        builder.expr(default, _Context())
    builder.block(node.body, _Context())
    params = tuple(a.arg for a in node.args.posonlyargs + node.args.args)
    kwonly = tuple(a.arg for a in node.args.kwonlyargs)
    return FunctionFlow(qualname, class_name, params, kwonly, tuple(builder.aliases), tuple(builder.calls),
                        tuple(builder.uses))
