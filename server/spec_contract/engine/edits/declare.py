"""Declaring a Protocol on a class, as a text edit: the fix of a capability the class does not declare
(SC006, see ``check.protocols``). libcst, so everything but the bases and the import stays as written."""

from __future__ import annotations

from collections.abc import Sequence


def declare_protocol(source: str, class_name: str, protocol_module: str, protocol: str) -> str:
    """``source`` with ``protocol`` added last to the bases of the top-level class ``class_name`` and imported:
    the fix of a capability the class does not declare (SC006). The name joins an existing import from the
    Protocol's module (absolute or relative, ``from .interfaces import (…)``) or a new import after the
    last top-level one. Unchanged when the class already lists it; libcst keeps everything else as written.
    """
    import libcst as cst  # only when a fix is asked for

    module = cst.parse_module(source)
    leaf = protocol_module.rpartition(".")[2]

    def dotted(node: cst.BaseExpression | None) -> str:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            return f"{dotted(node.value)}.{node.attr.value}"
        return ""

    def imports_from_protocol_module(stmt: cst.CSTNode) -> tuple[cst.ImportFrom, Sequence[cst.ImportAlias]] | None:
        """The statement's ``from <protocol module> import names`` and its names (never a ``*`` import)."""
        body = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if isinstance(body, cst.ImportFrom) and not isinstance(body.names, cst.ImportStar):
            name = dotted(body.module)
            if name == protocol_module or (body.relative and name.rpartition(".")[2] == leaf):
                return body, body.names
        return None

    bound = False
    for stmt in module.body:
        found = imports_from_protocol_module(stmt)
        if found is not None and any((a.evaluated_alias or a.evaluated_name) == protocol for a in found[1]):
            bound = True

    body = list(module.body)
    changed = False
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.ClassDef) and stmt.name.value == class_name:
            if any(dotted(arg.value).rpartition(".")[2] == protocol for arg in stmt.bases):
                return source
            bases = _appended(list(stmt.bases), cst.Arg(cst.Name(protocol)), stmt.lpar)
            parens = {} if isinstance(stmt.lpar, cst.LeftParen) else {"lpar": cst.LeftParen(), "rpar": cst.RightParen()}
            body[i] = stmt.with_changes(bases=bases, **parens)
            changed = True
    if not changed:
        return source
    if not bound:
        for i, stmt in enumerate(body):
            found = imports_from_protocol_module(stmt)
            if found is not None:
                statement, imported = found
                names = _appended(list(imported), cst.ImportAlias(cst.Name(protocol)), statement.lpar)
                body[i] = stmt.with_changes(body=[statement.with_changes(names=names)])
                break
        else:
            last_import = max((i for i, s in enumerate(body) if isinstance(s, cst.SimpleStatementLine)
                               and isinstance(s.body[0], (cst.Import, cst.ImportFrom))), default=-1)
            new = cst.parse_statement(f"from {protocol_module} import {protocol}\n")
            body.insert(last_import + 1, new)
    return module.with_changes(body=body).code


def _appended(items: list, new, lpar):
    """``items`` (bases or imported names) with ``new`` last, in the list's own layout: one per line with a
    trailing comma stays so, a one-line list gets ``, new``; ``lpar`` is the list's opening parenthesis (its
    line break is the separator a one-item list uses)."""
    import libcst as cst

    if not items:
        return [new]
    last = items[-1]
    if last.comma is cst.MaybeSentinel.DEFAULT:
        return items[:-1] + [last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), new]
    # a trailing comma: the new item takes it (and the line break before the closing parenthesis); the old
    # last item takes the separator the items before it use
    if len(items) > 1:
        between = items[-2].comma
    else:
        opening = getattr(lpar, "whitespace_after", None)
        between = cst.Comma(whitespace_after=opening if opening is not None else cst.SimpleWhitespace(" "))
    return items[:-1] + [last.with_changes(comma=between), new.with_changes(comma=last.comma)]
