"""Forwarding members ("delegation stubs") and suppression comments for wrapper classes, as text edits.

A wrapper that holds its language model in ``self.language_model`` must forward each contract member the
workers use on it. The stub copies the inner member's signature, so the wrapper accepts exactly what the
inner accepts, and forwards every argument by its kind. Annotations and defaults are source text from the
*inner* file, so they are only copied when every name in them also exists in the *wrapper's* module; an
annotation that does not is dropped, and a default that does not turns the stub into a plain
``*args, **kwargs`` pass-through (dropping or rewriting a default would change what callers get).

Both functions work on source text and return one ``TextEdit`` so the CLI (``--fix``) and the language
server (code actions) apply the same change. Positions are 0-based lines and code-point columns.
"""

from __future__ import annotations

import ast
import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_full_name_for_node

from spec_contract.engine.edits.names import Names, bound_names
from spec_contract.engine.edits.refusals import StubError, class_node, parsed, too_deep
from spec_contract.engine.edits.wrapper import WrapperClass, WrapperFile, line_after, newline, wrapper_file
from spec_contract.engine.results import Capture, Span, TextEdit
from spec_contract.engine.summarise.suppression import COMMENT, comment, extended
from spec_contract.engine.text import lines_with_ends

__all__ = ["Delegation", "StubError", "delegation_edit", "suppression_edit", "wrapper_file"]

_MAX_LINE = 88  # a def or call longer than this is split one argument per line, as black would
_LITERAL = frozenset({"Literal", "typing.Literal", "typing_extensions.Literal"})


@dataclass(frozen=True)
class Delegation:
    """One member the wrapper should forward, and where the inner class defines it."""

    member: str  # e.g. "get_embed_and_head"
    delegate: str  # attribute path on self: "language_model" or "minicpmv.llm"
    kind: str  # "method" | "async_method" | "property" | "attribute"
    inner_source: str | None  # full text of the file defining the inner member
    inner_line: int | None  # 0-based line of the member's name in inner_source
    # an implementation instead of a forward: the whole definition (decorators, signature, body), dedented
    body: str | None = None
    capture: Capture | None = None  # the decoder capture the implementation needs too (check.capture)
    like: str | None = None  # an implementation: the dotted name of the class the body is taken from


def delegation_edit(
    path: str, source: str, class_name: str, delegations: Sequence[Delegation]
) -> TextEdit | None:
    """One edit that adds a forwarding member for every delegation the class does not already define.

    None when nothing is to add, so applying the edit and asking again yields None (idempotent). The edit
    inserts after the class's last statement, whole (a backslash-continued line, a trailing ``;``); a one-line
    body (``class W(Base): pass``) is first moved onto a line of its own, the only change to existing text.
    ``source`` is read once for every class edited in it (see :mod:`edits.wrapper`).
    """
    try:
        return _delegation_edit(path, wrapper_file(source), class_name, delegations)
    except RecursionError as err:  # libcst's visitors recurse once per nesting level
        raise StubError("the code is nested too deeply to edit") from err


def _delegation_edit(
    path: str, wrapper: WrapperFile, class_name: str, delegations: Sequence[Delegation]
) -> TextEdit | None:
    klass = wrapper.wrapper_class(class_name)
    cls = klass.node
    present = _defined_members(class_node(wrapper.source, class_name))
    todo: dict[str, Delegation] = {}
    for delegation in delegations:
        if delegation.member not in present and delegation.member not in todo:
            todo[delegation.member] = delegation
    if not todo:
        return None

    lines = wrapper.lines
    class_indent = _leading_ws(lines[klass.line])
    one_line = not isinstance(cls.body, cst.IndentedBlock)
    own_indent = klass.indent(cls.body) if isinstance(cls.body, cst.IndentedBlock) else wrapper.default_indent
    unit = _indent_unit(klass, own_indent)
    body_indent = class_indent + own_indent
    blank = _blank_lines_between_methods(cls)
    names = wrapper.names(klass.line)
    nl = wrapper.newline
    chunks = []
    for delegation in todo.values():
        body = ([line.rstrip("\r\n") for line in lines_with_ends(delegation.body)] if delegation.body is not None
                else _stub_lines(delegation, names, unit, len(body_indent.expandtabs(4))))
        chunks.append(nl * blank + "".join((body_indent + line if line.strip() else "") + nl for line in body))
    text = "".join(chunks)

    after = line_after(lines, *klass.last_end)  # 0-based line the new members start on
    at_eof = after >= len(lines) and not lines[-1].endswith(("\n", "\r"))  # no final newline
    if one_line:
        # ``class W(Base): pass  # note`` → ``class W(Base):`` and ``    pass  # note`` on a line of its own.
        line, col = klass.first_start
        text_line = lines[line]
        cut = len(text_line[:col].rstrip(" \t"))
        tail = text_line[col:] + "".join(lines[line + 1 : after])
        if at_eof:
            return TextEdit(path, Span(line, cut, len(lines) - 1, len(lines[-1])),
                            nl + body_indent + tail + nl + text[: -len(nl)])
        return TextEdit(path, Span(line, cut, after, 0), nl + body_indent + tail + text)
    if not at_eof:
        return TextEdit(path, Span(after, 0, after, 0), text)
    # The class ends the file and the file has no final newline: start a line, and keep the file's lack of one.
    last = len(lines) - 1
    return TextEdit(path, Span(last, len(lines[last]), last, len(lines[last])), nl + text[: -len(nl)])


def suppression_edit(path: str, source: str, class_name: str, code: str | None) -> TextEdit:
    """Suppress ``code`` (every code when None) for the class.

    Inserts ``# spec-contract: ignore[CODE]`` on its own line above the class and its decorators, with the
    class's indentation; when a suppression comment is already there (or at the end of the class line), its
    code list is extended instead, so repeated "ignore" actions never stack comments.
    """
    # Only lines are needed, so ``ast`` finds them: it takes code nested far deeper than libcst does, and a
    # class whose forwards cannot be generated can still be suppressed.
    cls = class_node(source, class_name)
    lines = lines_with_ends(source)
    class_line = cls.lineno - 1
    top = min([cls.lineno, *(d.lineno for d in cls.decorator_list)]) - 1
    candidates = [top - 1] if top > 0 and lines[top - 1].lstrip().startswith("#") else []
    candidates.append(class_line)
    for line in candidates:
        match = COMMENT.search(lines[line])
        if match:
            return TextEdit(path, Span(line, match.start(), line, match.end()), extended(match, code))
    indent = _leading_ws(lines[top])
    return TextEdit(path, Span(top, 0, top, 0), indent + comment([code] if code else None) + newline(source))


# ---------------------------------------------------------------------------------------------------------
# The wrapper class


def _leading_ws(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _indent_unit(klass: WrapperClass, body_indent: str) -> str:
    """The indentation of a method body relative to its ``def`` (tabs, 2 or 4 spaces), as the class does it:
    its first method's, else its body's own (``body_indent``)."""
    for stmt in klass.node.body.body:
        if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
            return klass.indent(stmt.body)
    return body_indent


def _blank_lines_between_methods(cls: cst.ClassDef) -> int:
    """How many blank lines the class puts between two methods (usually 1), else before a method that
    follows something else (a docstring, class attributes), else 1."""
    body = cls.body.body
    after_method: Counter[int] = Counter()
    after_other: Counter[int] = Counter()
    for previous, stmt in zip(body, body[1:]):
        if isinstance(stmt, cst.FunctionDef):
            blank = sum(1 for line in stmt.leading_lines if line.comment is None)
            (after_method if isinstance(previous, cst.FunctionDef) else after_other)[blank] += 1
    counts = after_method or after_other
    return counts.most_common(1)[0][0] if counts else 1


def _defined_members(cls: ast.ClassDef) -> set[str]:
    """Names the class body binds (also under ``if``/``try``/``with``), and attributes its methods assign on
    ``self``: a stub must not shadow them."""
    names: set[str] = set()
    stmts: list[ast.stmt] = list(cls.body)
    while stmts:
        stmt = stmts.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
            if not isinstance(stmt, ast.ClassDef):
                names |= {name for node in ast.walk(stmt) for target in _assigned(node) for name in _on_self(target)}
        elif isinstance(stmt, (ast.If, ast.Try)):
            stmts += stmt.body + stmt.orelse + getattr(stmt, "finalbody", [])
            stmts += [s for handler in getattr(stmt, "handlers", []) for s in handler.body]
        elif isinstance(stmt, ast.With):
            stmts += stmt.body
        else:
            names |= bound_names(stmt)
    return names


def _assigned(node: ast.AST) -> list[ast.expr]:
    """The targets an assignment (``x = …``, ``x: T = …``) binds."""
    if isinstance(node, ast.Assign):
        return node.targets
    return [node.target] if isinstance(node, ast.AnnAssign) else []


def _on_self(target: ast.expr) -> set[str]:
    """``x`` of ``self.x`` in an assignment's target (also unpacked: ``self.x, self.y = …``)."""
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return {target.attr}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_on_self(e) for e in target.elts))
    return _on_self(target.value) if isinstance(target, ast.Starred) else set()


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


# ---------------------------------------------------------------------------------------------------------
# The stub


def _stub_lines(delegation: Delegation, names: Names, unit: str, width: int) -> list[str]:
    """The forwarding member's lines, relative to the class body's indentation (``width`` columns wide)."""
    fn, module = _find_inner_def(delegation)
    target = f"self.{delegation.delegate}.{delegation.member}"
    returns = _returns(fn, module, names)
    decorators = _decorator_names(fn) if fn is not None else set()
    if delegation.kind in ("property", "attribute") or decorators & {"property", "cached_property"}:
        return ["@property", f"def {delegation.member}(self){returns}:", f"{unit}return {target}"]

    is_async = fn.asynchronous is not None if fn is not None else delegation.kind == "async_method"
    signature = None
    if fn is not None and module is not None and "overload" not in decorators:
        signature = _signature(fn, module, names, drop_receiver="staticmethod" not in decorators)
    else:
        returns = ""  # one overload's return type is not the whole method's
    if signature is None:
        signature = (["self", "*args", "**kwargs"], ["*args", "**kwargs"])
    params, args = signature
    if is_async and fn is not None and _yields(fn):
        is_async = False  # an async generator is not awaited: hand back the generator object itself
    prefix = "async def" if is_async else "def"
    call_head = f"return await {target}" if is_async else f"return {target}"
    head = _wrapped(f"{prefix} {delegation.member}", params, f"{returns}:", unit, width)
    body = _wrapped(call_head, args, "", unit, width + len(unit.expandtabs(4)))
    return head + [unit + line for line in body]


def _wrapped(head: str, items: list[str], tail: str, unit: str, indent_width: int) -> list[str]:
    """``head(items)tail`` on one line, or one item per line when that would exceed the line length."""
    one = f"{head}({', '.join(items)}){tail}"
    if indent_width + len(one) <= _MAX_LINE or not items:
        return [one]
    return [f"{head}("] + [f"{unit}{item}," for item in items] + [f"){tail}"]


def _find_inner_def(delegation: Delegation) -> tuple[cst.FunctionDef | None, cst.Module | None]:
    """The inner member's ``def``: the one whose name is on ``inner_line``, else the first of that name."""
    if delegation.inner_source is None:
        return None, None
    return _inner_def(delegation.inner_source, delegation.member, delegation.inner_line)


@functools.lru_cache(maxsize=64)  # the wrappers of one file forward the same members of the same inner models
def _inner_def(source: str, member: str, line: int | None) -> tuple[cst.FunctionDef | None, cst.Module | None]:
    """See :func:`_find_inner_def`. Inner files are big (SGLang's ``deepseek_v2.py`` has 3000 lines) and libcst
    is slow on them, so ``ast`` finds the definition and libcst parses only its lines."""
    found = _inner_defs(source)
    if found is None or not found[0].get(member):
        return None, None
    defs, lines = found[0][member], found[1]
    node = next((d for d in defs if d.lineno - 1 == line), defs[0])
    if too_deep(node):
        return None, None  # libcst would not get through it: forward everything through *args, **kwargs
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    # Dedent by the def's column; lines indented less can only be inside strings or brackets.
    prefix = node.col_offset
    text = "".join(line[prefix:] if not line[:prefix].strip() else line for line in lines[first : node.end_lineno])
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None, None
    fn = module.body[0] if module.body else None
    return (fn, module) if isinstance(fn, cst.FunctionDef) else (None, None)


_Def = ast.FunctionDef | ast.AsyncFunctionDef


@functools.lru_cache(maxsize=4)
def _inner_defs(source: str) -> tuple[dict[str, list[_Def]], list[str]] | None:
    """An inner file's functions by name, each name's in line order, and its lines; None when it does not parse
    (its members are then forwarded through ``*args, **kwargs``)."""
    tree = parsed(source)
    if isinstance(tree, str):
        return None
    defs: dict[str, list[_Def]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(node.name, []).append(node)
    for named in defs.values():
        named.sort(key=lambda node: node.lineno)
    return defs, lines_with_ends(source)


def _decorator_names(fn: cst.FunctionDef) -> set[str]:
    """Last dotted part of each decorator: ``functools.cached_property`` → ``cached_property``."""
    out = set()
    for decorator in fn.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        name = get_full_name_for_node(expr)
        if name:
            out.add(name.rsplit(".", 1)[-1])
    return out


def _yields(fn: cst.FunctionDef) -> bool:
    """Whether ``fn`` itself (not a nested function) contains ``yield``."""

    class Finder(cst.CSTVisitor):
        found = False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Yield(self, node: cst.Yield) -> None:
            self.found = True

    finder = Finder()
    fn.body.visit(finder)
    return finder.found


def _signature(
    fn: cst.FunctionDef, module: cst.Module, names: Names, drop_receiver: bool
) -> tuple[list[str], list[str]] | None:
    """(parameters of the stub, arguments of the forwarded call), or None when only ``*args, **kwargs``
    can forward faithfully (no receiver parameter, or a default the wrapper module cannot evaluate)."""
    p = fn.params
    posonly, normal = list(p.posonly_params), list(p.params)
    if drop_receiver:
        if posonly:
            posonly.pop(0)
        elif normal:
            normal.pop(0)
        else:
            return None  # e.g. ``def m(*args)``: the receiver hides in *args
    star = p.star_arg if isinstance(p.star_arg, cst.Param) else None
    everything = [*posonly, *normal, *p.kwonly_params, *(x for x in (star, p.star_kwarg) if x is not None)]
    if any(param.name.value == "self" for param in everything):
        return None
    for param in everything:
        if param.default is not None and not _available(param.default, names.at_run_time, annotation=False):
            return None

    def text(param: cst.Param, stars: str = "") -> str:
        annotation = _annotation(param.annotation, module, names)
        out = stars + param.name.value + (f": {annotation}" if annotation else "")
        if param.default is not None:
            out += (" = " if annotation else "=") + _code(param.default, module)
        return out

    params = ["self"] + [text(x) for x in posonly] + (["/"] if posonly else []) + [text(x) for x in normal]
    args = [x.name.value for x in (*posonly, *normal)]
    if star is not None:
        params.append(text(star, "*"))
        args.append(f"*{star.name.value}")
    elif p.kwonly_params:
        params.append("*")
    params += [text(x) for x in p.kwonly_params]
    args += [f"{x.name.value}={x.name.value}" for x in p.kwonly_params]
    if p.star_kwarg is not None:
        params.append(text(p.star_kwarg, "**"))
        args.append(f"**{p.star_kwarg.name.value}")
    return params, args


def _returns(fn: cst.FunctionDef | None, module: cst.Module | None, names: Names) -> str:
    if fn is None or module is None:
        return ""
    annotation = _annotation(fn.returns, module, names)
    return f" -> {annotation}" if annotation else ""


def _annotation(node: cst.Annotation | None, module: cst.Module, names: Names) -> str | None:
    if node is None or not _available(node.annotation, names.in_annotations, annotation=True):
        return None
    return _code(node.annotation, module)


@functools.lru_cache(maxsize=1024)  # the nodes of the inner definitions kept (see _inner_def): every wrapper of
# a file that forwards the same member writes the same text
def _code(node: cst.CSTNode, module: cst.Module) -> str:
    """Source text of an expression on one line (a default spread over lines, maybe with comments between
    them, is normalised through ``ast`` so the stub stays one clean line)."""
    code = module.code_for_node(node).strip()
    if "\n" in code or "\r" in code:
        try:
            return ast.unparse(ast.parse(f"({code})", mode="eval"))
        except SyntaxError:
            pass
    return code


def _available(expr: cst.BaseExpression, known: Callable[[str], bool], annotation: bool) -> bool:
    """Whether every name ``expr`` reads from its module is one ``known`` to the wrapper's module."""
    names = _free_names(expr, annotation)
    return names is not None and all(known(name) for name in names)


@functools.lru_cache(maxsize=1024)  # as _code
def _free_names(expr: cst.BaseExpression, annotation: bool) -> frozenset[str] | None:
    """The names ``expr`` reads from its module (see :class:`_FreeNames`), or None when it cannot tell."""
    collector = _FreeNames(annotation)
    expr.visit(collector)
    return frozenset(collector.names - collector.bound) if collector.ok else None


class _FreeNames(cst.CSTVisitor):
    """Names an expression reads from its module. Attribute tails and keyword names are not reads;
    lambda parameters and comprehension targets are bound locally. In annotations, string annotations are
    parsed and read too (except inside ``Literal[...]``, where strings are values)."""

    def __init__(self, annotation: bool) -> None:
        self.annotation = annotation
        self.names: set[str] = set()
        self.bound: set[str] = set()
        self.ok = True
        self._literal_depth = 0

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> None:
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.bound.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self.bound.add(star.name.value)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.bound |= _target_names(node.target)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if get_full_name_for_node(node.value) in _LITERAL:
            self._literal_depth += 1

    def leave_Subscript(self, original_node: cst.Subscript) -> None:
        if get_full_name_for_node(original_node.value) in _LITERAL:
            self._literal_depth -= 1

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if not self.annotation or self._literal_depth:
            return
        value = node.evaluated_value
        try:
            inner = cst.parse_expression(value.strip() if isinstance(value, str) else "")
        except cst.ParserSyntaxError:
            self.ok = False
            return
        inner.visit(self)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
        if self.annotation and not self._literal_depth:
            self.ok = False  # too unusual to interpret; drop the annotation
        return False
