"""A summary's classes and local imports, parsing the class statements the scanner deferred as they are asked for.

A model file's class statements wait as text (:class:`~spec_contract.engine.summarise.summary.DeferredClass`) until
the analysis asks for one of their classes; the summary stays plain data, and the parsing happens here, in
the reader the index (and the project) read classes through. What a statement held once parsed is kept in
the summary's ``parsed`` memo, so a summary shared between analyses (or restored from the cache with the
registered classes already parsed) parses each statement once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from spec_contract.engine.summarise.summary import Chain, ClassSummary, DeferredClass, ImportBinding, ModuleSummary
from spec_contract.engine.summarise.syntax import chain_of

_WORD = re.compile(r"\w+")


class Unread(NamedTuple):
    """A class whose statement is still text, as far as it can be read without parsing its body: the bases its
    header names and every word its text holds (each member its body may define is one of them)."""

    bases: tuple[Chain, ...]
    words: frozenset[str]


def find_class(summary: ModuleSummary, qualname: str) -> ClassSummary | None:
    """The class of that dotted name the module ends up with, parsing its statement if it was deferred.

    A name bound twice is the last definition at run time (a second ``class A`` replaces the first), so
    the last top-level ``class`` of that name is the one checked, and a nested name is looked up in it.
    """
    top = qualname.partition(".")[0]
    found = held = None
    # A statement's nested classes come before the class that holds them (``Outer.W``, then ``Outer``)
    for cls in _in_order(summary, lambda d: d.name == top):
        if cls.qualname == qualname:
            held = cls
        if "." not in cls.qualname:  # a top-level class closes its statement
            if cls.qualname == top:
                found = held  # a later definition of the outer class: what the earlier one held is gone
            held = None
    return found


def unread(summary: ModuleSummary, qualname: str) -> Unread | None:
    """The top-level class ``qualname`` read from its deferred statement's header and words, without parsing
    its body; None where only a parse answers (the statement was parsed, the name is defined twice or nested,
    the header does not parse alone, or the text is not ASCII: the parser reads identifiers in NFKC form).

    Asking whether a base defines a member is most of why a class of another file is read; a class whose text
    lacks the member's name cannot define it, and its bases are in its header."""
    if "." in qualname or any(c.qualname == qualname for c in summary.classes):
        return None
    statements = [i for i, d in enumerate(summary.deferred) if d.name == qualname]
    if len(statements) != 1 or statements[0] in summary.parsed:
        return None
    deferred = summary.deferred[statements[0]]
    if not deferred.text.isascii():
        return None
    from spec_contract.engine.summarise.statements import class_header  # the parser: see ``summaries``
    header = class_header(deferred.text, deferred.first_line, summary.path)
    if header is None:
        return None
    bases = tuple(c for c in (chain_of(b) for b in header[0].bases) if c is not None)
    return Unread(bases, frozenset(_WORD.findall(deferred.text)))


def all_classes(summary: ModuleSummary, mentioning: str | None = None) -> list[ClassSummary]:
    """Every class in file order; with ``mentioning``, deferred ones whose text lacks it are left out."""
    return list(_in_order(summary, lambda d: mentioning is None or mentioning in d.text))


def top_level_classes(summary: ModuleSummary, names: Iterable[str]) -> list[ClassSummary]:
    """The top-level classes of those names, in file order; of a name defined twice, the last definition
    (see :func:`find_class`)."""
    wanted = set(names)
    last = {c.qualname: c for c in _in_order(summary, lambda d: d.name in wanted) if c.qualname in wanted}
    return sorted(last.values(), key=lambda c: (c.span.line, c.span.col))


def local_import(summary: ModuleSummary, name: str) -> ImportBinding | None:
    """The binding of ``name`` by an import inside a function or class, the last one in the file.

    Resolution looks here for names no module-level statement binds (``from .mistral import X`` inside
    a function of ``__init__``). Of the deferred class statements, only those that may import ``name``
    are parsed for it.
    """
    found = [(line, binding) for line, binding in summary.local_imports if binding.name == name]
    for index, deferred in enumerate(summary.deferred):
        if name in deferred.imported:
            _complete(summary, index)
            found += [(line, binding) for line, binding in summary.parsed[index].local_imports
                      if binding.name == name]
    return sorted(found, key=lambda item: item[0])[-1][1] if found else None  # stable: the later of one line's


def factory(summary: ModuleSummary, cls: ClassSummary, name: str) -> tuple[Chain, ...] | None:
    """What the class's factory ``name`` (its first of that name, see ``ClassSummary.factories``) returns
    instances of, None if it has none: a method whose body its statement's skeleton left out is parsed now."""
    found = [((at, 1, 0), made) for at, (named, made) in enumerate(cls.factories) if named == name]
    for method in cls.unread:
        if method.name == name and (made := _unread_factories(summary, cls, method.lines)):
            found.append(((method.position, 0, method.lines[0]), made))
    return min(found, key=lambda item: item[0])[1] if found else None


def _unread_factories(summary: ModuleSummary, cls: ClassSummary, lines: tuple[int, int]) -> tuple[Chain, ...]:
    for deferred in summary.deferred:
        if deferred.name == cls.name and deferred.first_line < lines[0] \
                and lines[1] <= deferred.first_line + 1 + deferred.text.count("\n"):
            from spec_contract.engine.summarise.pieces import method_factories_of
            return method_factories_of(deferred, lines, summary.path)
    return ()


def _in_order(summary: ModuleSummary, wanted: Callable[[DeferredClass], bool]) -> Iterator[ClassSummary]:
    """The parsed classes and those of the ``wanted`` deferred statements (parsed now), in file order."""
    deferred = iter(enumerate(summary.deferred))
    pending = next(deferred, None)
    for position, cls in enumerate(summary.classes):
        while pending is not None and pending[1].position <= position:
            if wanted(pending[1]):
                yield from _complete(summary, pending[0])
            pending = next(deferred, None)
        yield cls
    while pending is not None:
        if wanted(pending[1]):
            yield from _complete(summary, pending[0])
        pending = next(deferred, None)


def _complete(summary: ModuleSummary, index: int) -> tuple[ClassSummary, ...]:
    if index not in summary.parsed:
        from spec_contract.engine.summarise.pieces import parse_deferred
        summary.parsed[index] = parse_deferred(summary.deferred[index], summary.path)
    return summary.parsed[index].classes
