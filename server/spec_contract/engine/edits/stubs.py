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
import builtins
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_full_name_for_node, get_full_name_for_node_or_raise
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from spec_contract.engine.edits.refusals import LIBCST, file_refusal, too_deep
from spec_contract.engine.results import Capture, Span, TextEdit
from spec_contract.engine.summarise.suppression import COMMENT, comment, extended
from spec_contract.engine.text import LINE_BREAK, lines_with_ends

_MAX_LINE = 88  # a def or call longer than this is split one argument per line, as black would
_BUILTINS = frozenset(dir(builtins))
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


class StubError(ValueError):
    """The wrapper source does not parse, the class is not in it, or libcst cannot edit it (code nested
    deeper than its recursive visitors go, an expression longer than its parser takes)."""


def delegation_edit(
    path: str, source: str, class_name: str, delegations: Sequence[Delegation]
) -> TextEdit | None:
    """One edit that adds a forwarding member for every delegation the class does not already define.

    None when nothing is to add, so applying the edit and asking again yields None (idempotent). The edit
    inserts after the class's last statement, whole (a backslash-continued line, a trailing ``;``); a one-line
    body (``class W(Base): pass``) is first moved onto a line of its own, the only change to existing text.
    """
    try:
        return _delegation_edit(path, source, class_name, delegations)
    except RecursionError as err:  # libcst's visitors recurse once per nesting level
        raise StubError("the code is nested too deeply to edit") from err


def _delegation_edit(
    path: str, source: str, class_name: str, delegations: Sequence[Delegation]
) -> TextEdit | None:
    wrapper = _Wrapper(source)
    cls = wrapper.find_class(class_name)
    present = _defined_members(cls)
    todo: dict[str, Delegation] = {}
    for delegation in delegations:
        if delegation.member not in present and delegation.member not in todo:
            todo[delegation.member] = delegation
    if not todo:
        return None

    unit = _indent_unit(cls, wrapper.module)
    class_indent = _leading_ws(wrapper.lines[wrapper.start_line(cls)])
    one_line = not isinstance(cls.body, cst.IndentedBlock)
    own_indent = cls.body.indent if isinstance(cls.body, cst.IndentedBlock) else None
    body_indent = class_indent + (own_indent or wrapper.module.default_indent)
    blank = _blank_lines_between_methods(cls)
    names = _module_names(wrapper.module, wrapper.pos, wrapper.start_line(cls))
    nl = wrapper.newline
    chunks = []
    for delegation in todo.values():
        lines = ([line.rstrip("\r\n") for line in lines_with_ends(delegation.body)] if delegation.body is not None
                 else _stub_lines(delegation, names, unit, len(body_indent.expandtabs(4))))
        chunks.append(nl * blank + "".join((body_indent + line if line.strip() else "") + nl for line in lines))
    text = "".join(chunks)

    last_node = cls.body if one_line else cls.body.body[-1]
    end = wrapper.pos[last_node].end
    after = _line_after(wrapper.lines, end.line - 1, end.column)  # 0-based line the new members start on
    at_eof = after >= len(wrapper.lines) and not wrapper.lines[-1].endswith(("\n", "\r"))  # no final newline
    if one_line:
        # ``class W(Base): pass  # note`` → ``class W(Base):`` and ``    pass  # note`` on a line of its own.
        first = wrapper.pos[cls.body.body[0]].start
        line, col = first.line - 1, first.column
        text_line = wrapper.lines[line]
        cut = len(text_line[:col].rstrip(" \t"))
        tail = text_line[col:] + "".join(wrapper.lines[line + 1 : after])
        if at_eof:
            return TextEdit(path, Span(line, cut, len(wrapper.lines) - 1, len(wrapper.lines[-1])),
                            nl + body_indent + tail + nl + text[: -len(nl)])
        return TextEdit(path, Span(line, cut, after, 0), nl + body_indent + tail + text)
    if not at_eof:
        return TextEdit(path, Span(after, 0, after, 0), text)
    # The class ends the file and the file has no final newline: start a line, and keep the file's lack of one.
    last = len(wrapper.lines) - 1
    return TextEdit(path, Span(last, len(wrapper.lines[last]), last, len(wrapper.lines[last])), nl + text[: -len(nl)])


def _line_after(lines: Sequence[str], line: int, col: int) -> int:
    """The line after the logical line a statement ending at (``line``, ``col``) closes.

    libcst's position of a statement stops at the statement itself; what may follow it on its line is a
    ``;``, a comment, or a backslash that joins the next line (which then holds no more than that either)."""
    while line < len(lines):
        rest = lines[line][col:].rstrip("\r\n").rstrip(" \t\x0c")
        if not (rest.endswith("\\") and "#" not in rest):
            return line + 1
        line, col = line + 1, 0
    return line


def suppression_edit(path: str, source: str, class_name: str, code: str | None) -> TextEdit:
    """Suppress ``code`` (every code when None) for the class.

    Inserts ``# spec-contract: ignore[CODE]`` on its own line above the class and its decorators, with the
    class's indentation; when a suppression comment is already there (or at the end of the class line), its
    code list is extended instead, so repeated "ignore" actions never stack comments.
    """
    # Only lines are needed, so ``ast`` finds them: it takes code nested far deeper than libcst does, and a
    # class whose forwards cannot be generated can still be suppressed.
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise StubError(f"the file does not parse: {getattr(err, 'msg', err)}") from err
    cls = _find_ast_class(tree.body, class_name)
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
    return TextEdit(path, Span(top, 0, top, 0), indent + comment([code] if code else None) + _newline(source))


def _find_ast_class(body: list[ast.stmt], dotted: str) -> ast.ClassDef:
    """The class ``A.B`` of a module, also under ``if``/``try``/``with``: of a name defined twice, the last
    definition (the one the runtime uses, as ``deferred.find_class`` takes it), so that the forwards and the
    suppression comment land in the class the check reads."""
    found: ast.ClassDef | None = None
    for part in dotted.split("."):
        found = next((c for c in reversed(list(_ast_class_defs(body))) if c.name == part), None)
        if found is None:
            raise StubError(f"class {dotted} not found")
        body = found.body
    assert found is not None
    return found


def _ast_class_defs(body: list[ast.stmt]) -> Iterable[ast.ClassDef]:
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield stmt
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            blocks = [stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
            blocks += [handler.body for handler in getattr(stmt, "handlers", [])]
            for block in blocks:
                yield from _ast_class_defs(block)


# ---------------------------------------------------------------------------------------------------------
# The wrapper file


class _Wrapper:
    """The parsed wrapper module: its lines, positions and newline style."""

    def __init__(self, source: str) -> None:
        # CPython's parser first: what it refuses (and what it accepts but nests deeper than libcst's
        # recursive visitors go) would cost libcst seconds, or its native parser's stack, before failing.
        why = file_refusal(source)
        if why is not None:
            raise StubError(why)
        tree = ast.parse(source)
        try:
            wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
            self.pos = wrapper.resolve(PositionProvider)
        except cst.ParserSyntaxError as err:  # Python parses it (above); libcst has limits of its own
            raise StubError(f"{LIBCST}: {err.message}") from err
        except Exception as err:  # noqa: BLE001  running out of stack in libcst surfaces as RecursionError,
            # or as a KeyError from its position bookkeeping's context managers unwinding
            raise StubError(f"{LIBCST} ({type(err).__name__})") from err
        self.module = wrapper.module
        self.tree = tree
        self.lines = lines_with_ends(source)
        self.newline = _newline(source)

    def find_class(self, dotted: str) -> cst.ClassDef:
        """The class the analysis checked (see :func:`_find_ast_class`), as libcst's node: the one that starts
        where ``ast`` puts it (the ``class`` keyword, after indentation only, so columns agree)."""
        cls = _find_ast_class(self.tree.body, dotted)
        node = next((node for node, where in self.pos.items() if isinstance(node, cst.ClassDef)
                     and (where.start.line, where.start.column) == (cls.lineno, cls.col_offset)), None)
        if node is None:  # the two parsers disagree on where it is: better no edit than one in the wrong place
            raise StubError(f"class {dotted} not found")
        return node

    def start_line(self, node: cst.CSTNode) -> int:
        return self.pos[node].start.line - 1


def _blocks_stmts(stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements of every block of a compound statement (if/elif/else, try/except/else/finally, with)."""
    out: list[cst.CSTNode] = []
    blocks: list[cst.CSTNode | None] = [getattr(stmt, "body", None)]
    orelse = getattr(stmt, "orelse", None)
    while orelse is not None:
        blocks.append(orelse.body)
        orelse = getattr(orelse, "orelse", None)
    blocks.extend(h.body for h in getattr(stmt, "handlers", ()))
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        blocks.append(final.body)
    for block in blocks:
        if isinstance(block, cst.IndentedBlock):
            out.extend(block.body)
    return out


def _newline(source: str) -> str:
    match = LINE_BREAK.search(source)
    return match.group(0) if match else "\n"


def _leading_ws(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _indent_unit(cls: cst.ClassDef, module: cst.Module) -> str:
    """The indentation of a method body relative to its ``def`` (tabs, 2 or 4 spaces), as the class does it."""
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
            return stmt.body.indent or module.default_indent
    if isinstance(cls.body, cst.IndentedBlock) and cls.body.indent:
        return cls.body.indent
    return module.default_indent


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


def _defined_members(cls: cst.ClassDef) -> set[str]:
    """Names the class body binds, and attributes its methods assign on ``self``: a stub must not shadow them."""
    names: set[str] = set()
    stmts: list[cst.CSTNode] = list(cls.body.body)
    while stmts:
        stmt = stmts.pop()
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
            if isinstance(stmt, cst.FunctionDef):
                collector = _SelfAttributes()
                stmt.body.visit(collector)
                names |= collector.names
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                names |= _bound_names(small)
        elif isinstance(stmt, cst.BaseSmallStatement):  # a one-line body: ``class W: x = 1``
            names |= _bound_names(stmt)
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
            stmts.extend(_blocks_stmts(stmt))
    return names


class _SelfAttributes(cst.CSTVisitor):
    """Collects ``x`` of every ``self.x = …`` (instance attributes set in methods)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Attribute) and _is_name(target.value, "self"):
            self.names.add(target.attr.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


def _bound_names(small: cst.CSTNode) -> set[str]:
    """Names a simple statement binds in its scope (assignments and imports)."""
    if isinstance(small, cst.Assign):
        return set().union(*(_target_names(t.target) for t in small.targets))
    if isinstance(small, (cst.AnnAssign, cst.AugAssign)):
        return _target_names(small.target)
    if isinstance(small, cst.Import):
        return {_imported_as(a, top=True) for a in small.names}  # ``import a.b`` binds ``a``
    if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        return {_imported_as(a, top=False) for a in small.names}
    return set()


def _imported_as(alias: cst.ImportAlias, top: bool) -> str:
    """The name an imported alias binds (an import's ``as`` target is always a plain name)."""
    if alias.asname is not None:
        return cst.ensure_type(alias.asname.name, cst.Name).value
    name = get_full_name_for_node_or_raise(alias.name)
    return name.split(".")[0] if top else name


@dataclass(frozen=True)
class _Names:
    """Names usable in the wrapper module: at run time (defaults), and in annotations."""

    runtime: frozenset[str]
    annotations: frozenset[str]


def _module_names(module: cst.Module, pos: Mapping[cst.CSTNode, CodeRange], class_line: int) -> _Names:
    """Top-level names of the wrapper module that a member of the class on ``class_line`` can use.

    Defaults, and annotations unless ``from __future__ import annotations`` postpones them, are evaluated
    when the class body runs, so only names bound above the class count for them. Postponed annotations
    may use any top-level name, including those imported under ``if TYPE_CHECKING:``.
    """
    before: set[str] = set()
    postponed: set[str] = set()  # bound below the class, or only for type checkers
    future = False

    def walk(body: Sequence[cst.CSTNode], checking: bool) -> None:
        nonlocal future
        for stmt in body:
            if isinstance(stmt, cst.If) and _is_type_checking(stmt.test):
                walk(stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else (), True)
                if isinstance(stmt.orelse, cst.If):  # elif: an ordinary if statement of its own
                    walk([stmt.orelse], checking)
                elif isinstance(stmt.orelse, cst.Else) and isinstance(stmt.orelse.body, cst.IndentedBlock):
                    walk(stmt.orelse.body.body, checking)
                continue
            if isinstance(stmt, (cst.If, cst.Try, cst.With)):
                walk(_blocks_stmts(stmt), checking)
                continue
            names: set[str] = set()
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                names.add(stmt.name.value)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    names |= _bound_names(small)
                    future = future or _is_future_annotations(small)
            if checking or pos[stmt].start.line - 1 >= class_line:
                postponed.update(names)
            else:
                before.update(names)

    walk(module.body, False)
    runtime = frozenset(before | _BUILTINS)
    return _Names(runtime, runtime | postponed if future else runtime)


def _is_future_annotations(small: cst.CSTNode) -> bool:
    return (
        isinstance(small, cst.ImportFrom)
        and small.module is not None
        and _is_name(small.module, "__future__")
        and not isinstance(small.names, cst.ImportStar)
        and any(alias.name.value == "annotations" for alias in small.names)
    )


def _is_type_checking(test: cst.BaseExpression) -> bool:
    return get_full_name_for_node(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


# ---------------------------------------------------------------------------------------------------------
# The stub


def _stub_lines(delegation: Delegation, names: _Names, unit: str, width: int) -> list[str]:
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
    """The inner member's ``def``: the one whose name is on ``inner_line``, else the first of that name.

    Inner files are big (SGLang's ``deepseek_v2.py`` has 3000 lines) and libcst is slow on them, so ``ast``
    finds the definition and libcst parses only its lines.
    """
    source = delegation.inner_source
    if source is None:
        return None, None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, None
    defs = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == delegation.member
    ]
    if not defs:
        return None, None
    defs.sort(key=lambda node: node.lineno)
    node = next((d for d in defs if d.lineno - 1 == delegation.inner_line), defs[0])
    if too_deep(node):
        return None, None  # libcst would not get through it: forward everything through *args, **kwargs
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    lines = lines_with_ends(source)[first : node.end_lineno]
    # Dedent by the def's column; lines indented less can only be inside strings or brackets.
    prefix = node.col_offset
    text = "".join(line[prefix:] if not line[:prefix].strip() else line for line in lines)
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None, None
    fn = module.body[0] if module.body else None
    return (fn, module) if isinstance(fn, cst.FunctionDef) else (None, None)


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
    fn: cst.FunctionDef, module: cst.Module, names: _Names, drop_receiver: bool
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
        if param.default is not None and not _available(param.default, names.runtime, annotation=False):
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


def _returns(fn: cst.FunctionDef | None, module: cst.Module | None, names: _Names) -> str:
    if fn is None or module is None:
        return ""
    annotation = _annotation(fn.returns, module, names)
    return f" -> {annotation}" if annotation else ""


def _annotation(node: cst.Annotation | None, module: cst.Module, names: _Names) -> str | None:
    if node is None or not _available(node.annotation, names.annotations, annotation=True):
        return None
    return _code(node.annotation, module)


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


def _available(expr: cst.BaseExpression, available: frozenset[str], annotation: bool) -> bool:
    collector = _FreeNames(annotation)
    expr.visit(collector)
    return collector.ok and (collector.names - collector.bound) <= available


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
