"""Reading one file into a :class:`~spec_contract.engine.summary.ModuleSummary`.

The text is cut into top-level statements (:mod:`~spec_contract.engine.statements`); each parsed one adds
its imports, module-level aliases and registry entries here, its classes through
:mod:`~spec_contract.engine.classes` and, in a worker file, its functions' flow records through
:mod:`~spec_contract.engine.flow`. A model file's class statements wait as text until a check asks for
them. The scanner never imports or executes the file.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, replace
from typing import TypeVar

from spec_contract.engine.classes import nested_statements, summarise_class
from spec_contract.engine.flow import function_flow
from spec_contract.engine.statements import (
    CLASS_STATEMENT,
    error_message,
    import_words,
    parse_at,
    parse_by_member,
    top_level,
)
from spec_contract.engine.summary import (
    Chain,
    ClassSummary,
    DeferredClass,
    FunctionFlow,
    ImportBinding,
    ModuleSummary,
    ParsedClass,
)
from spec_contract.engine.syntax import Lines, chain_of
from spec_contract.engine.text import LINE_BREAK

T = TypeVar("T")


@dataclass(frozen=True)
class _Piece:
    """What one top-level statement contributes to its module's summary."""

    imports: tuple[ImportBinding, ...]
    local_imports: tuple[tuple[int, ImportBinding], ...]  # (line, binding) of imports inside functions and classes
    classes: tuple[ClassSummary, ...]
    assignments: tuple[tuple[str, Chain], ...]
    class_maps: tuple[tuple[str, tuple[Chain, ...]], ...]
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
        # Statements of the class bodies parsed last time, by (first line, text): see ``parse_by_member``
        self.members: dict[tuple[int, str], list[ast.stmt]] = {}
        self.context: tuple[bool, str | None] | None = None  # (worker, entry variable) the pieces were made for


def scan(path: str, module: str, digest: str, text: str, *, worker: bool, entry_variable: str | None,
         memo: StatementMemo | None = None) -> ModuleSummary:
    """Summarise one file; a syntax error gives an empty summary with ``error`` set.

    The file is split into top-level statements (see :func:`top_level`). With a ``memo`` (an editor buffer)
    each is a piece of its own, and those unchanged since the memo's last scan are not parsed again. Without
    one, a model file's class statements are deferred (see :class:`DeferredClass`) and the statements
    between them parsed together; a worker file is parsed whole.
    """
    is_package = path.endswith("__init__.py")
    lines = Lines(text)
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
            body = parse_by_member(statement, line, path, memo.members if reusable else {}, members)
            if body is not None:
                return body
        return parse_at(statement, line, path)

    try:
        for key, body in top_level(text, previous, lazy=lazy, per_statement=memo is not None, filename=path,
                                    parse=parse if memo is not None else None):
            if body is None and key[1:] in previous:
                line, piece = previous[key[1:]]  # shifting what it holds costs a fraction of parsing it
                piece = piece if line == key[0] else moved_below(piece, 0, key[0] - line)
            elif body is not None:
                piece = _piece(body, lines, worker, entry_variable, key[1])
            else:
                if name := CLASS_STATEMENT.match(key[1]):
                    deferred.append(DeferredClass(name.group(1), key[0], key[1], key[2], parsed_classes,
                                                  import_words(key[1])))
                continue
            pieces.append(piece)
            parsed_classes += len(piece.classes)
            if memo is not None:
                made[key[1:]] = (key[0], piece)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return ModuleSummary(path, module, digest, (), (), (), None, (), is_package, error=error_message(exc))
    if memo is not None:
        memo.pieces, memo.context = made, (worker, entry_variable)
        # Class statements not parsed this time keep their body statements for the next edit in them, as long
        # as each still stands at its line (a statement that moved is parsed again)
        kept = memo.members if reusable else {}
        if kept:
            starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)] if "\r" in text \
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
                            local_imports=tuple(b for p in pieces for b in p.local_imports),
                            class_maps=tuple(m for p in pieces for m in p.class_maps))
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
    lines = Lines.of_statement(deferred)
    try:
        body = parse_at(deferred.text, deferred.first_line, path)
        piece = _piece(body, lines, False, None, deferred.text)  # recursive: deep expressions end here too
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return ParsedClass((), (), error_message(exc))
    return ParsedClass(piece.classes, piece.local_imports, None)



def _piece(body: list[ast.stmt], lines: Lines, worker: bool, entry_variable: str | None, text: str) -> _Piece:
    """What the statements ``body``, parsed from ``text``, contribute to their module's summary."""
    imports: list[ImportBinding] = []
    assignments: list[tuple[str, Chain]] = []
    class_maps: list[tuple[str, tuple[Chain, ...]]] = []
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
                summarise_class(stmt, "", lines, classes, functions if worker else None)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if worker:
                    functions.append(function_flow(stmt, stmt.name, None, lines))
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
                            elif isinstance(stmt.value, ast.Dict) and stmt.value.values:
                                values = [chain_of(v) for v in stmt.value.values]
                                if all(v is not None and v[-1][:1].isupper() and "()" not in v and "[]" not in v
                                       for v in values):
                                    class_maps.append((target.id, tuple(values)))
            elif isinstance(stmt, ast.If):
                module_level(_runtime_body(stmt))
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
                     for node in (nested_statements(body, into_classes=True) if "import" in text else ())
                     if isinstance(node, ast.ImportFrom) and id(node) not in top
                     for alias in node.names if alias.name != "*"]
    return _Piece(tuple(imports), tuple(local_imports), tuple(classes), tuple(assignments), tuple(class_maps),
                  tuple(entries), tuple(functions))


def _runtime_body(stmt: ast.If) -> list[ast.stmt]:
    """The statements of an ``if``'s body that bind what runs: in ``if TYPE_CHECKING: class _Base(nn.Module): …
    else: _Base = LlamaForCausalLM`` the body only shapes what a type checker sees, so a class or plain alias
    there gives way to the ``else`` branch's alias of the same name (imports and other names stay)."""
    test = stmt.test
    if not stmt.orelse or (chain_of(test) or ("",))[-1] != "TYPE_CHECKING":
        return stmt.body
    rebound = set()
    for other in stmt.orelse:
        if isinstance(other, ast.Assign) and len(other.targets) == 1 and isinstance(other.targets[0], ast.Name):
            value = chain_of(other.value)
            if value is not None and "()" not in value and "[]" not in value:
                rebound.add(other.targets[0].id)
    return [s for s in stmt.body if not (
        (isinstance(s, ast.ClassDef) and s.name in rebound)
        or (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id in rebound))]


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
