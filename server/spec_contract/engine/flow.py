"""Worker functions' flow records: aliases, calls with their argument chains, and every ``<chain>.<member>``
use with whether a guard on the same receiver and member dominates it (see
:class:`~spec_contract.engine.summary.FunctionFlow`).

Deciding which uses belong to the contract needs the whole tree and happens later, in
:mod:`spec_contract.engine.contract`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from spec_contract.engine.summary import CallFlow, Chain, FunctionFlow, Use
from spec_contract.engine.syntax import Lines, chain_of, dotted

_CATCHES_MISSING_ATTRIBUTE = {"AttributeError", "Exception", "BaseException"}
Fact = tuple[str, str]  # (receiver chain as dotted text, member); ("*", "*") for "any AttributeError is caught"
_TRY = frozenset(getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name))
_MATCH = getattr(ast, "Match", None)


@dataclass
class _Context:
    facts: frozenset[Fact] = frozenset()
    conditions: frozenset[str] = frozenset()

    def add(self, facts: frozenset[Fact] = frozenset(), conditions: frozenset[str] = frozenset()) -> "_Context":
        return _Context(self.facts | facts, self.conditions | conditions)


@dataclass
class _FlowBuilder:
    lines: Lines
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
    text = dotted(receiver)
    return ("*", "*") in ctx.facts or (text, member) in ctx.facts or (text, "*") in ctx.facts


def _facts(test: ast.expr) -> tuple[frozenset[Fact], frozenset[Fact]]:
    """Guards known when ``test`` is true, and when it is false."""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and len(test.args) >= 2:
        if test.func.id == "hasattr" and isinstance(test.args[1], ast.Constant) and isinstance(test.args[1].value, str):
            receiver = chain_of(test.args[0])
            if receiver is not None:
                return frozenset({(dotted(receiver), test.args[1].value)}), frozenset()
        if test.func.id in ("getattr",) and isinstance(test.args[1], ast.Constant) and isinstance(test.args[1].value, str):
            receiver = chain_of(test.args[0])  # ``if getattr(m, "x", None):`` — m.x exists in the body
            if receiver is not None and len(test.args) >= 3:
                return frozenset({(dotted(receiver), test.args[1].value)}), frozenset()
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "callable" and test.args:
        return _facts(test.args[0])
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" and test.args:
        receiver = chain_of(test.args[0])  # a runtime-checkable Protocol or a class: every member is vouched for
        if receiver is not None:
            return frozenset({(dotted(receiver), "*")}), frozenset()
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


def function_flow(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, class_name: str | None,
                   lines: Lines) -> FunctionFlow:
    builder = _FlowBuilder(lines)
    for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
        builder.expr(default, _Context())
    builder.block(node.body, _Context())
    params = tuple(a.arg for a in node.args.posonlyargs + node.args.args)
    kwonly = tuple(a.arg for a in node.args.kwonlyargs)
    return FunctionFlow(qualname, class_name, params, kwonly, tuple(builder.aliases), tuple(builder.calls),
                        tuple(builder.uses))
