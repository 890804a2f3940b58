"""What one top-level statement contributes to its module's summary (a :class:`Piece`).

Each parsed statement adds its imports, module-level aliases and registry entries here, its classes through
:mod:`~spec_contract.engine.summarise.classes` and, in a worker file, its functions' flow records through
:mod:`~spec_contract.engine.summarise.flow`. The scanner (:mod:`~spec_contract.engine.summarise.scan`) assembles a file's pieces;
a class statement it deferred is read here too, when the analysis first asks for it
(:func:`parse_deferred`, called by :mod:`~spec_contract.engine.summarise.deferred`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from spec_contract.engine.summarise.classes import method_factories, nested_statements, summarise_class
from spec_contract.engine.summarise.flow import function_flow
from spec_contract.engine.summarise.registries import Registration, registrations
from spec_contract.engine.summarise.skeleton import skeleton, verified
from spec_contract.engine.summarise.statements import error_message, parse_at
from spec_contract.engine.summarise.summary import (
    Chain,
    ClassSummary,
    DeferredClass,
    FunctionFlow,
    ImportBinding,
    ParsedClass,
)
from spec_contract.engine.summarise.syntax import Lines, chain_of


@dataclass(frozen=True)
class Piece:
    """What one top-level statement contributes to its module's summary."""

    imports: tuple[ImportBinding, ...]
    local_imports: tuple[tuple[int, ImportBinding], ...]  # (line, binding) of imports inside functions and classes
    classes: tuple[ClassSummary, ...]
    assignments: tuple[tuple[str, Chain], ...]
    class_maps: tuple[tuple[str, tuple[Chain, ...]], ...]
    entries: tuple[tuple[bool, tuple[str, ...]], ...]  # (augmented, names) per entry-class assignment
    functions: tuple[FunctionFlow, ...]
    registrations: tuple[Registration, ...] = ()  # a worker file's classes registered under an algorithm's name


def parse_deferred(deferred: DeferredClass, path: str) -> ParsedClass:
    """What a class statement the scanner deferred holds: its classes (the class, then those nested in it)
    and the imports inside its methods, or its syntax error.

    Its skeleton is read where it has one (see :mod:`~spec_contract.engine.summarise.skeleton`: the method
    bodies that add nothing are left out, so a syntax error inside one goes unseen), else the whole text; a
    skeleton that does not parse as the text would is dropped for the whole text, whose own error counts."""
    lines = Lines.of_statement(deferred)
    made = skeleton(deferred.text, deferred.first_line)
    if made is not None:
        text, skipped = made
        unread = {line: skip.lines for line, skip in skipped.items() if skip.lines is not None}
        try:
            body = parse_at(text, deferred.first_line, path)
            if verified(body, skipped):
                piece = piece_of(body, lines, False, None, deferred.text, unread)
                return ParsedClass(piece.classes, piece.local_imports, None)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    try:
        body = parse_at(deferred.text, deferred.first_line, path)
        piece = piece_of(body, lines, False, None, deferred.text)  # recursive: deep expressions end here too
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return ParsedClass((), (), error_message(exc))
    return ParsedClass(piece.classes, piece.local_imports, None)


def method_factories_of(deferred: DeferredClass, lines: tuple[int, int], path: str) -> tuple[Chain, ...]:
    """The factories of the method on ``lines`` (1-based) of a deferred statement whose skeleton left its body
    out (see :func:`parse_deferred`); none if it does not parse."""
    text = "\n".join(deferred.text.split("\n")[lines[0] - deferred.first_line - 1:lines[1] - deferred.first_line])
    try:
        module = parse_at("class _:\n" + text + "\n", lines[0] - 2, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    stmt = module[0].body[0] if len(module) == 1 and type(module[0]) is ast.ClassDef and module[0].body else None
    return method_factories(stmt) if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else ()


def piece_of(body: list[ast.stmt], lines: Lines, worker: bool, entry_variable: str | None, text: str,
             unread: dict[int, tuple[int, int]] | None = None) -> Piece:
    """What the statements ``body``, parsed from ``text``, contribute to their module's summary (``unread``: see
    :func:`~spec_contract.engine.summarise.classes.summarise_class`)."""
    imports: list[ImportBinding] = []
    assignments: list[tuple[str, Chain]] = []
    class_maps: list[tuple[str, tuple[Chain, ...]]] = []
    entries: list[tuple[bool, tuple[str, ...]]] = []
    classes: list[ClassSummary] = []
    functions: list[FunctionFlow] = []
    registered: list[Registration] = []

    for stmt in _module_level(body):
        if worker:
            registered += registrations(stmt)
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    imports.append(ImportBinding(alias.asname, alias.name, None, 0))
                else:
                    package = alias.name.split(".")[0]
                    imports.append(ImportBinding(package, package, None, 0))
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                imports.append(ImportBinding(alias.asname or alias.name, stmt.module or "", alias.name, stmt.level))
        elif isinstance(stmt, ast.ClassDef):
            summarise_class(stmt, "", lines, classes, functions if worker else None, unread)
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
                            values = [v for v in map(chain_of, stmt.value.values)
                                      if v is not None and v[-1][:1].isupper() and "()" not in v and "[]" not in v]
                            if len(values) == len(stmt.value.values):
                                class_maps.append((target.id, tuple(values)))
    top = set(map(id, body))
    local_imports = [(node.lineno, ImportBinding(alias.asname or alias.name, node.module or "", alias.name, node.level))
                     for node in (nested_statements(body, into_classes=True) if "import" in text else ())
                     if isinstance(node, ast.ImportFrom) and id(node) not in top
                     for alias in node.names if alias.name != "*"]
    return Piece(tuple(imports), tuple(local_imports), tuple(classes), tuple(assignments), tuple(class_maps),
                 tuple(entries), tuple(functions), tuple(registered))


def _module_level(stmts: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run at module level, in order: ``stmts``, and those inside their ``if`` (see
    :func:`_runtime_body`) and ``try`` statements (a generator, not a closure calling itself: that would be a
    reference cycle per statement read, left for the cyclic collector, which a large analysis never runs)."""
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            yield from _module_level(_runtime_body(stmt))
            yield from _module_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from _module_level(stmt.body)
            for handler in stmt.handlers:
                yield from _module_level(handler.body)
            yield from _module_level(stmt.orelse)
            yield from _module_level(stmt.finalbody)
        else:
            yield stmt


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


def _entry_names(value: ast.expr) -> list[str]:
    """The classes a registry assignment names: ``Name``, or dotted (``Outer.W``, a nested class)."""
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return [name for e in value.elts for name in _entry_names(e) if isinstance(e, (ast.Name, ast.Attribute))]
    if isinstance(value, ast.Name):
        return [value.id]
    if isinstance(value, ast.Attribute):
        chain = chain_of(value)
        return [".".join(chain)] if chain is not None and "()" not in chain and "[]" not in chain else [value.attr]
    if isinstance(value, ast.BinOp):
        return _entry_names(value.left) + _entry_names(value.right)
    return []
