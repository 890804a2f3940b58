"""Reading one file into a :class:`~spec_contract.engine.summarise.summary.ModuleSummary`.

The text is cut into top-level statements (:mod:`~spec_contract.engine.summarise.statements`); what each parsed one
contributes comes from :mod:`~spec_contract.engine.summarise.pieces`. A model file's class statements wait as text
until a check asks for them (:mod:`~spec_contract.engine.summarise.deferred` parses them then). The scanner never
imports or executes the file.
"""

from __future__ import annotations

import ast
import operator
import unicodedata
from bisect import bisect_right
from dataclasses import replace
from typing import TypeVar

from spec_contract.engine.summarise.deferred import top_level_classes
from spec_contract.engine.summarise.pieces import Piece, piece_of
from spec_contract.engine.summarise.statements import (
    Members,
    deferred_class,
    error_message,
    import_words,
    parse_at,
    parse_by_member,
    top_level,
)
from spec_contract.engine.summarise.summary import ClassSummary, DeferredClass, Delegate, Member, ModuleSummary, Use
from spec_contract.engine.summarise.syntax import Lines

T = TypeVar("T", Piece, ModuleSummary)
Spanned = TypeVar("Spanned", Member, Delegate, Use)


class StatementMemo:
    """The pieces of one file's last scan, so that scanning its next text re-reads only what an edit touched.

    A piece is keyed by its statement's text and the line above it (where a suppression comment for a class
    may sit); every other input of a piece lies inside the statement, and its first line only numbers what it
    holds. The language server keeps one memo per open buffer: a keystroke in a 3,000-line model file then
    parses one statement, not the file, and a new line moves the statements below it without parsing them.
    """

    def __init__(self) -> None:
        self.pieces: dict[tuple[str, str], tuple[int, Piece]] = {}  # (text, line above) → (first line, piece)
        # Statements of the class bodies parsed so far, by (first line, text): see ``parse_by_member``
        self.members: Members = {}
        self.context: tuple[bool, str | None] | None = None  # (worker, entry variable) the pieces were made for


def scan(path: str, module: str, digest: str, text: str, *, worker: bool, entry_variable: str | None,
         memo: StatementMemo | None = None, registered: tuple[str, ...] = ()) -> ModuleSummary:
    """Summarise one file; a syntax error gives an empty summary with ``error`` set.

    The file is split into top-level statements (see :func:`top_level`). With a ``memo`` (an editor buffer)
    each is a piece of its own, and those unchanged since the memo's last scan are not parsed again. Without
    one, a model file's class statements are deferred (see :class:`DeferredClass`) and the statements
    between them parsed together; a worker file is parsed whole. The classes the file registers in its
    entry-class variable are parsed at once (see :func:`_parse_registered`), and so are the ``registered``
    ones (those an engine's model registry names here, without the bases and parts of the file they hold:
    a check reads most of those from their words, never parsed).
    """
    is_package = path.endswith("__init__.py")
    lines = Lines(text)
    reusable = memo is not None and memo.context == (worker, entry_variable)
    previous = memo.pieces if memo is not None and reusable else {}
    known_members = memo.members if memo is not None and reusable else {}  # see ``parse_by_member``
    pieces: list[Piece] = []  # in file order
    made: dict[tuple[str, str], tuple[int, Piece]] = {}  # the memo's next pieces
    deferred: list[DeferredClass] = []
    parsed_classes = 0
    # A model file read from disk defers its classes; an editor buffer is read whole, so that a syntax error
    # anywhere shows at once and hover and actions find every class parsed.
    lazy = not worker and memo is None
    members: Members = {}  # the memo's next class body statements
    reused: list[tuple[int, int, int]] = []  # statements of the memo reused: (old first line, old end, lines moved)

    def parse(statement: str, line: int) -> list[ast.stmt]:
        """An editor buffer's statement: a changed class is parsed one body statement at a time."""
        if statement.startswith(("class", "@")):
            body = parse_by_member(statement, line, path, known_members, members)
            if body is not None:
                return body
        return parse_at(statement, line, path)

    try:
        for key, body in top_level(text, previous, lazy=lazy, per_statement=memo is not None, filename=path,
                                    parse=parse if memo is not None else None):
            if body is None and key[1:] in previous:
                line, piece = previous[key[1:]]  # shifting what it holds costs a fraction of parsing it
                reused.append((line, line + key[1].count("\n"), key[0] - line))
                piece = piece if line == key[0] else moved_below(piece, 0, key[0] - line)
            elif body is not None:
                piece = piece_of(body, lines, worker, entry_variable, key[1])
            else:
                if name := deferred_class(key[1]):
                    # named as Python names it (NFKC: ``class 𝒲Llava`` defines ``WLlava``), as ``ast`` does
                    deferred.append(DeferredClass(unicodedata.normalize("NFKC", name), key[0], key[1],
                                                  key[2], parsed_classes,
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
        memo.members = _still_there(known_members, reused) | members
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
                            class_maps=tuple(m for p in pieces for m in p.class_maps),
                            registrations=tuple(r for p in pieces for r in p.registrations))
    if entry:
        _parse_registered(summary, entry)
    elif registered:
        top_level_classes(summary, registered)
    return summary


def _still_there(members: Members, reused: list[tuple[int, int, int]]) -> Members:
    """The class body pieces of the last scans that the class statements reused this time hold, at their new
    lines (a class that moved took its body with it; its pieces are renumbered only if an edit comes to
    them): for the next edit in them. The others were left behind by a class parsed again."""
    if not members:
        return members
    reused = sorted(reused)
    firsts = [first for first, _, _ in reused]
    kept: Members = {}
    for (line, piece), entry in members.items():
        k = bisect_right(firsts, line) - 1
        if k >= 0 and line < reused[k][1]:
            kept[(line + reused[k][2], piece)] = entry
    return kept


def _parse_registered(summary: ModuleSummary, entry: list[str]) -> None:
    """Parse now the deferred classes a check will ask for first: the registered ones and, within the file,
    their bases and inner models (``self.model = DeepseekV2Model(...)``), so that the work happens where the
    file is scanned (on the cold run's other cores) rather than later, one class at a time."""
    wanted, seen = {name.partition(".")[0] for name in entry}, set[str]()  # ``Outer.W``: Outer's statement
    while wanted - seen:
        names = wanted - seen
        seen |= names
        for cls in top_level_classes(summary, names):
            wanted.update(chain[0] for chain in cls.bases)
            wanted.update(d.callee[0] for d in cls.delegates)


def moved_below(held: T, first: int, lines: int) -> T:
    """What a piece or a summary (``held``) holds, with every position from line ``first`` on moved down by
    ``lines`` (up when negative): what a new or deleted line above them does. What holds no moved position is
    kept as it is (the same object)."""
    classes = tuple(_moved_class(cls, first, lines) for cls in held.classes)
    functions = tuple(fn if all(u.span.line < first for u in fn.uses)
                      else replace(fn, uses=tuple(_moved(use, first, lines) for use in fn.uses))
                      for fn in held.functions)
    return replace(held, classes=classes, functions=functions,
                   local_imports=tuple((line + lines if line >= first else line, binding)
                                       for line, binding in held.local_imports))


def _moved_class(cls: ClassSummary, first: int, lines: int) -> ClassSummary:
    span = cls.span.moved(first, lines)
    members = tuple(_moved(m, first, lines) for m in cls.members)
    delegates = tuple(_moved(d, first, lines) for d in cls.delegates)
    if span is cls.span and all(map(operator.is_, members, cls.members)) \
            and all(map(operator.is_, delegates, cls.delegates)):
        return cls
    return replace(cls, span=span, members=members, delegates=delegates)


def _moved(held: Spanned, first: int, lines: int) -> Spanned:
    """A member, delegate or use with its span moved (itself above ``first``).

    The copy is made without ``dataclasses.replace``, which builds it through the frozen ``__init__``, one
    ``object.__setattr__`` per field: a new line near the top of a 5,800-line buffer moves thousands of these,
    and replace was most of the cost. None of the three has a field outside ``__init__`` or a ``__post_init__``.
    """
    if held.span.line < first:
        return held
    copy = object.__new__(type(held))
    copy.__dict__.update(held.__dict__)
    copy.__dict__["span"] = held.span.moved(first, lines)
    return copy


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


