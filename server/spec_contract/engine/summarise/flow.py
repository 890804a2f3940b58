"""Worker functions' flow records: aliases, calls with their argument chains, and every ``<chain>.<member>``
use with whether a guard on the same receiver and member dominates it (see
:class:`~spec_contract.engine.summarise.summary.FunctionFlow`).

Deciding which uses belong to the contract needs the whole tree and happens later, in
:mod:`spec_contract.engine.contract`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple, TypeVar, cast

from spec_contract.engine.results import Span
from spec_contract.engine.summarise.routes import Route, routes
from spec_contract.engine.summarise.selectors import Formula, Selects, held_by, negate, returned, value_of, words
from spec_contract.engine.summarise.selectors import formula as selector
from spec_contract.engine.summarise.summary import NEVER_TRUE, RETURNED, CallFlow, Chain, FunctionFlow, Use
from spec_contract.engine.summarise.syntax import Lines, blocks_of, chain_of, dotted

_CATCHES_MISSING_ATTRIBUTE = {"AttributeError", "Exception", "BaseException"}
Fact = tuple[str, str]  # (receiver chain as dotted text, member); ("*", "*") for "any AttributeError is caught"
# (receiver text, member, every member of the gate on that receiver, 0-based line of the gate's test)
Gate = tuple[str, str, tuple[str, ...], int]
# Calls whose value is an environment variable: a test on one marks a rarely taken path (flags default off)
_ENV_READERS = frozenset({"getenv", "get_bool_env_var", "get_int_env_var", "get_env_var"})
# Names a test must hold for it to vouch for members (guards, gates, fallbacks) or to be a rare condition
_VOUCHING = frozenset({"hasattr", "getattr", "callable", "isinstance"})
_RARE_WORDS = _ENV_READERS | {"envs", "environ", "model_type", "architectures", "isinstance"}
_TRY = frozenset(getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name))  # TryStar: 3.11
# Most expressions visited: nothing to record, nothing inside. Visits skip them before the call, not in it (a
# worker's flow records visit half a dozen such nodes per use)
_LEAVES = frozenset({ast.Name, ast.Constant})


class _Context(NamedTuple):
    """What holds where a statement runs: guards, capability gates passed, members known absent, the names and
    rare condition of the enclosing tests, and the formulas of the tests that may select an algorithm (see
    ``selectors``). (A named tuple: a new one is made for every branch, and made from its fields in order, by
    ``_context``, it costs a sixth of ``_replace``, itself several times cheaper than ``dataclasses.replace``.)"""

    facts: frozenset[Fact] = frozenset()
    conditions: frozenset[str] = frozenset()
    gates: frozenset[Gate] = frozenset()
    absent: frozenset[Fact] = frozenset()
    condition: str | None = None
    condition_classes: tuple[str, ...] = ()  # the config classes an ``isinstance`` condition asks for
    taken: frozenset[str] = frozenset()  # names of the enclosing tests whose *true* branch this is
    selects: Selects = ()  # the formulas of the enclosing tests, each true here

    def add(self, facts: frozenset[Fact] = frozenset(), conditions: frozenset[str] = frozenset()) -> _Context:
        if not facts and not conditions:
            return self
        known, met, gates, absent, condition, classes, taken, selects = self
        return _context((known | facts if facts else known, met | conditions if conditions else met, gates, absent,
                         condition, classes, taken, selects))

    def passed(self, gates: frozenset[Gate]) -> _Context:
        if not gates:
            return self
        facts, conditions, passed, absent, condition, classes, taken, selects = self
        return _context((facts, conditions, passed | gates, absent, condition, classes, taken, selects))

    def without(self, absent: frozenset[Fact]) -> _Context:
        if not absent:
            return self
        facts, conditions, gates, missing, condition, classes, taken, selects = self
        return _context((facts, conditions, gates, missing | absent, condition, classes, taken, selects))

    def taking(self, test: ast.expr, branch: bool) -> _Context:
        """The context of one branch of ``test``: the test's formula holds there (its negation in the false
        branch), and the words it holds true count as taken (``is_eagle3`` in the true branch of ``if
        is_eagle3():`` and in the false branch of ``if not is_eagle3():``)."""
        return self.holding(selector(test), branch)

    def holding(self, found: Formula | None, branch: bool) -> _Context:
        """:meth:`taking` with the test's formula read already (an ``if`` makes up to three of its branches)."""
        if found is None:
            return self
        holds = found if branch else negate(found)
        facts, conditions, gates, absent, condition, classes, taken, selects = self
        held = words(holds)
        return _context((facts, conditions, gates, absent, condition, classes, taken | held if held else taken,
                         (*selects, holds)))

    def selecting(self, found: Formula) -> _Context:
        facts, conditions, gates, absent, condition, classes, taken, selects = self
        return _context((facts, conditions, gates, absent, condition, classes, taken, (*selects, found)))

    def under(self, condition: str | None, classes: tuple[str, ...] = ()) -> _Context:
        if not condition or self.condition:
            return self
        facts, conditions, gates, absent, _, _, taken, selects = self
        return _context((facts, conditions, gates, absent, condition, classes, taken, selects))


# ``_Context(*fields)`` without the named tuple's ``__new__``, a Python function: half the cost, and a worker's
# flow records make a context for every branch, by the ten thousand
_context = cast("Callable[[tuple], _Context]", partial(tuple.__new__, _Context))


class _OptionalReads:
    """``v = getattr(m, "x", None)`` then ``if v is None: raise``: the read is a capability gate, not a guard; so is
    each read of ``v = getattr(m, "a", None) or getattr(m, "b", None)``, one gate that either member passes."""

    def __init__(self) -> None:
        self._reads: dict[str, list[int]] = {}  # local name → indices in the uses of the reads it was assigned from

    def remember(self, name: str, value: ast.expr, uses: list[Use], before: int) -> None:
        """``name = value`` was assigned, after the uses from ``before`` on were recorded for ``value``."""
        self._reads.pop(name, None)
        if type(value) is ast.Call:  # most values are no read at all: told so before any list is made
            read = _optional_getattr(value)
            if read is None:
                return
            reads = [read]
        elif type(value) is ast.BoolOp and type(value.op) is ast.Or:
            found_reads = [_optional_getattr(operand) for operand in value.values]
            reads = [read for read in found_reads if read is not None]
            if len(reads) != len(found_reads):
                return
        else:
            return
        names = [read.args[1] for read in reads]
        if not all(type(n) is ast.Constant and isinstance(n.value, str) for n in names) \
                or len(objects := {chain_of(read.args[0]) for read in reads}) > 1 or None in objects:
            # a value that may be something else, a member named at run time, or reads of two objects (the run is
            # refused only when both lack theirs: no gate of either): no gate to read
            return
        members = {cast(ast.Constant, name).value for name in names}
        found = [index for index in range(before, len(uses))
                 if uses[index].guarded and not uses[index].is_call and uses[index].member in members]
        if found and len(found) == len(reads):
            self._reads[name] = found

    def share(self, target: ast.Attribute, name: str, uses: list[Use]) -> None:
        """``other.x = v`` after ``v = getattr(m, "x", None)``: the read's value becomes another object's ``x``
        (vLLM 0.25.1's loader, ``eagle_model.lm_head = target_lm_head``), so a class without ``x`` leaves that
        object with whatever ``x`` it has of its own."""
        found = self._reads.get(name)
        if found is not None and len(found) == 1:
            index = found[0]
            if uses[index].member == target.attr and chain_of(target.value) != uses[index].receiver:
                uses[index] = _changed(uses[index], shared=True)

    def gate(self, test: ast.expr, uses: list[Use]) -> None:
        """The body of ``if v is None …: raise`` runs when the optional reads of ``v`` found nothing: they are a
        capability gate (required: the engine refuses the run) that any of their members passes, not guards."""
        for name in _none_tests(test):
            found = self._reads.pop(name, None)
            if found is not None:
                members = tuple(sorted({uses[index].member for index in found}))
                line = min(uses[index].span.line for index in found)
                for index in found:
                    uses[index] = _changed(uses[index], guarded=False, gate=members, gate_line=line)


class _Arm(NamedTuple):
    """What one arm of an ``if`` leaves for its body, its ``else`` and the code after it (see ``_FlowBuilder._if``):
    ``_arm`` reads it from the test, ``_past_body`` adds ``orelse`` and ``raises`` once the body was visited."""

    body: _Context  # the context of its body
    orelse: _Context  # the context of its ``else`` (known once the body was visited: see ``_past_body``)
    names: frozenset[str]  # the names its test holds
    positive: frozenset[Fact]
    negative: frozenset[Fact]
    absent_if_true: frozenset[Fact]
    absent_if_false: frozenset[Fact]
    rare: tuple[str, bool] | None
    found: Formula | None
    raises: bool


@dataclass
class _FlowBuilder:
    lines: Lines
    aliases: list[tuple[Chain, Chain]] = field(default_factory=list)
    calls: list[CallFlow] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)
    predicates: dict[str, str] = field(default_factory=dict)  # methods False unless an env flag: name → its read
    optional_reads: _OptionalReads = field(default_factory=_OptionalReads)
    flags: dict[tuple[str, Formula | None, Selects], None] = field(default_factory=dict)  # see FunctionFlow
    states: dict[tuple[str, str, str], None] = field(default_factory=dict)  # see FunctionFlow
    validates: dict[tuple[str, str, str], None] = field(default_factory=dict)  # see FunctionFlow
    asking: dict[str, Fact] = field(default_factory=dict)  # a local name → what its value asks for (see ``_flag``)
    builds: dict[tuple[Chain, Selects], None] = field(default_factory=dict)
    checks: list[Use] = field(default_factory=list)  # see ``_checked``

    # statements -------------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], ctx: _Context) -> None:
        for stmt in stmts:
            ctx = self.stmt(stmt, ctx)

    def stmt(self, stmt: ast.stmt, ctx: _Context) -> _Context:
        """Visit one statement; returns the context for the statements after it."""
        # ``type(x) is`` rather than ``isinstance``: parsed nodes are never subclassed, and the commonest
        # statements and expressions are told apart this way on the hot path
        if type(stmt) is ast.Expr:  # the commonest statements first
            return _expression_statement(self, stmt.value, ctx)
        if type(stmt) is ast.Return:
            _return_statement(self, stmt.value, ctx)
            return ctx
        if type(stmt) is ast.Assign:
            before = len(self.uses)
            value = stmt.value
            self.expr(value, ctx)
            for target in stmt.targets:
                _flag(self, target, value, ctx)
                self._bind_all(target, value)
                if type(target) is ast.Name:  # a name reads nothing
                    self.optional_reads.remember(target.id, value, self.uses, before)
                    continue
                _visit_target(self, target, ctx)
                if type(target) is ast.Attribute and type(value) is ast.Name:
                    self.optional_reads.share(target, value.id, self.uses)
            return ctx
        if type(stmt) is ast.If:
            return self._if(stmt, ctx)
        if type(stmt) in _TRY:
            return self._try(cast(ast.Try, stmt), ctx)  # a TryStar has a Try's fields
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
            self.block(stmt.body, ctx.taking(stmt.test, True).add(conditions=_names(stmt.test)))
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
                    self._bind_all(stmt.target, stmt.value)
                    _flag(self, stmt.target, stmt.value, ctx)
            _visit_target(self, stmt.target, ctx)
            return ctx
        if type(stmt) is ast.Match:
            _match(self, stmt, ctx)
            return ctx
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                self.expr(child, ctx)
        return ctx

    def _try(self, stmt: ast.Try, ctx: _Context) -> _Context:
        protected = any(_catches_attribute_error(h) and not _reraises(h) for h in stmt.handlers)
        before = len(self.uses)
        self.block(stmt.body, ctx.add(frozenset({("*", "*")})) if protected else ctx)
        # A handler of AttributeError around uses of ``m.a`` runs when ``m.a`` is missing: what it reads
        # on ``m`` is a fallback for those members.
        tried = frozenset((dotted(u.receiver), u.member) for u in self.uses[before:])
        for handler in stmt.handlers:
            members = sorted({m for _, m in tried if not m.startswith("__")})
            if _catches_attribute_error(handler) and members:
                self.block(handler.body, ctx.without(tried).under(
                    " or ".join(f"`{m}`" for m in members) + " raised AttributeError"))
            else:
                self.block(handler.body, ctx)
        self.block(stmt.orelse, ctx)
        self.block(stmt.finalbody, ctx)
        return ctx

    def _if(self, stmt: ast.If, ctx: _Context) -> _Context:
        """Visit an ``if`` and its ``elif`` arms; returns the context after it. The arms are walked in a loop,
        not by recursion (an arm is the ``else`` of the one before): a chain of a few hundred arms would pass
        the interpreter's depth and lose the uses of the arms past it. Each arm's own work is done in the order
        recursion would do it: its test and body on the way down, what follows its ``else`` on the way up."""
        outer: list[tuple[ast.If, _Context, _Arm]] = []  # the arms whose ``else`` is the next arm
        while True:
            arm = _arm(self, stmt, ctx)
            if arm is None:  # a gate chain took it whole
                after = ctx
                break
            self.block(stmt.body, arm.body)  # from here: a nested ``if`` costs the stack no more than recursion did
            arm = _past_body(self, stmt, ctx, arm)
            if len(stmt.orelse) == 1 and type(stmt.orelse[0]) is ast.If:
                outer.append((stmt, ctx, arm))
                stmt, ctx = stmt.orelse[0], arm.orelse
                continue
            self.block(stmt.orelse, arm.orelse)
            after = _after(self, stmt, ctx, arm)
            break
        for stmt, ctx, arm in reversed(outer):
            after = _after(self, stmt, ctx, arm)
        return after

    def _bind_all(self, target: ast.expr, value: ast.expr) -> None:
        if type(value) in _SPLIT:
            for sub, source in _assigned(target, value):
                self._bind(sub, source)
        elif (chain := chain_of(value)) is not None:  # what ``_assigned`` gives, without a generator
            self._bind(target, chain)

    def _bind(self, target: ast.expr, source: Chain) -> None:
        name = chain_of(target)
        if name is not None and (len(name) == 1 or (len(name) == 2 and name[0] == "self")):
            self.aliases.append((name, source))

    # expressions ------------------------------------------------------------------------------
    def expr(self, node: ast.expr, ctx: _Context) -> None:
        # ``type(node) is``, which narrows the node's type as ``isinstance`` does, without a ``cast`` call
        if type(node) in _LEAVES:
            return
        if type(node) is ast.Call:
            self._call(node, ctx)
            return
        if type(node) is ast.Attribute:
            _attribute(self, node, chain_of(node.value), ctx, False, None)
            return
        if type(node) is ast.BoolOp:
            current = ctx
            and_ = type(node.op) is ast.And
            for operand in node.values:
                self.expr(operand, current)
                positive, negative = _facts(operand)
                # the next operand runs only when this one was true (``and``) or false (``or``)
                current = current.add(positive if and_ else negative).taking(operand, and_)
            return
        if type(node) is ast.IfExp:
            self.expr(node.test, ctx)
            positive, negative = _facts(node.test)
            self.expr(node.body, ctx.taking(node.test, True).add(positive))
            self.expr(node.orelse, ctx.taking(node.test, False).add(negative))
            return
        if type(node) is ast.Lambda:
            self.expr(node.body, ctx)
            return
        if type(node) is ast.NamedExpr:  # ``if (model := runner.model) is not None:``: an assignment
            self.expr(node.value, ctx)
            self._bind_all(node.target, node.value)
            return
        for child in _children(node):
            if type(child) in _LEAVES:
                continue
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
        if type(func) is ast.Name and func.id in ("getattr", "hasattr") and len(node.args) >= 2 \
                and type(node.args[1]) is ast.Constant and isinstance(node.args[1].value, str):
            receiver = chain_of(node.args[0])
            if func.id == "getattr" and receiver is not None:
                member = node.args[1].value
                guarded = len(node.args) >= 3 or any(k.arg == "default" for k in node.keywords) \
                    or _is_guarded(ctx, receiver, member)
                span = self.lines.node_span(node.args[1])
                self.uses.append(_make_use(receiver, member, span, False, None, guarded, ctx,
                                                self.lines.text(node.lineno)))
            for arg in node.args:
                if type(arg) not in _LEAVES:
                    self.expr(arg, ctx)
            return
        args, keywords = node.args, node.keywords
        starred = any(type(a) is ast.Starred for a in args) if args else False
        arity = None if keywords or starred else len(args)
        callee: Chain | None
        if type(func) is ast.Attribute:
            receiver = chain_of(func.value)
            _attribute(self, func, receiver, ctx, True, arity)
            callee = receiver + (func.attr,) if receiver is not None else None
        else:
            if type(func) is not ast.Name:
                self.expr(func, ctx)
            callee = chain_of(func)
        if callee is not None:
            # (most calls have no ``*args`` and no keyword: no comprehension made for them)
            chains = tuple([None if type(a) is ast.Starred else chain_of(a) for a in args]) if starred \
                else tuple(map(chain_of, args))
            kwargs = tuple([(k.arg, c) for k in keywords if k.arg and (c := chain_of(k.value)) is not None]) \
                if keywords else ()
            # a call that binds a parameter, and every call of one of the class's own methods (whether a
            # method only runs under a flag depends on all of them)
            if kwargs or chains.count(None) != len(chains) or (len(callee) == 2 and callee[0] == "self"):
                self.calls.append(_built(CallFlow, {"callee": callee, "args": chains, "kwargs": kwargs,
                                                    "taken": ctx.taken, "selects": ctx.selects, "vouched": ctx.facts}))
            if callee[-1][:1].isupper():
                self.builds[(callee, ctx.selects)] = None
        for arg in args:
            if type(arg) is ast.Starred:
                arg = arg.value
            if type(arg) not in _LEAVES:
                self.expr(arg, ctx)
        for keyword in keywords:
            value, name = keyword.value, keyword.arg
            if name and not (type(value) is ast.Constant and not value.value):
                # a keyword argument given a value that may be true: a possible flag (see ``_flag``)
                self.flags[(name, selector(value), ctx.selects)] = None
            if type(value) not in _LEAVES:
                self.expr(value, ctx)


def _arm(builder: _FlowBuilder, stmt: ast.If, ctx: _Context) -> _Arm | None:
    """Visit an arm's test; what its body, its ``else`` and the code after it need. None: the arm starts a
    gate chain (``if hasattr(m, "a"): … elif hasattr(m, "b"): … else: raise``), visited whole here."""
    test = stmt.test
    names = _names(test)
    vouching = not names.isdisjoint(_VOUCHING)  # most tests name no hasattr/getattr: nothing to derive
    chain = _gate_chain(stmt) if vouching else None
    if chain is not None:
        _gate_chain_block(builder, stmt, chain, ctx)
        return None
    builder.expr(test, ctx)
    positive, negative = _facts(test) if vouching else _NO_FACTS
    absent_if_true, absent_if_false = _absent(test) if vouching else _NO_FACTS
    rare = None
    if not names.isdisjoint(_RARE_WORDS) or not names.isdisjoint(builder.predicates):
        rare = _rare_condition(test, builder.lines, builder.predicates)
    found = selector(test)
    body_ctx = ctx.add(positive, names).without(absent_if_true).holding(found, True)
    if rare is not None and rare[1]:
        body_ctx = body_ctx.under(rare[0], _config_classes(test))
    return _Arm(body_ctx, body_ctx, names, positive, negative, absent_if_true, absent_if_false, rare, found, False)


def _past_body(builder: _FlowBuilder, stmt: ast.If, ctx: _Context, arm: _Arm) -> _Arm:
    """The arm once its body was visited: whether the body raises, and the context of its ``else``."""
    raises = _raises(stmt.body)
    negative, rare, found = arm.negative, arm.rare, arm.found
    if raises:
        builder.optional_reads.gate(stmt.test, builder.uses)
        builder.validates.update(dict.fromkeys(_validated(stmt.test, negative, ctx)))
    # ``if not hasattr(m, "x"): raise …`` asserts the member: the else branch is not guarded by it, it
    # sits behind a capability gate.
    else_ctx = (ctx.add(frozenset() if raises else negative, arm.names).without(arm.absent_if_false)
                .holding(found, False))
    if rare is not None and not rare[1]:
        else_ctx = else_ctx.under(rare[0])
    if raises:
        else_ctx = else_ctx.passed(frozenset((r, m, (m,), stmt.lineno - 1) for r, m in negative))
    body, _, names, positive, _, absent_if_true, absent_if_false, _, _, _ = arm
    return _Arm(body, else_ctx, names, positive, negative, absent_if_true, absent_if_false, rare, found, raises)


def _after(builder: _FlowBuilder, stmt: ast.If, ctx: _Context, arm: _Arm) -> _Context:
    """The context past an arm whose ``else`` was visited: what a raise, a return or a loop exit in one of
    its branches leaves true after it."""
    found, rare, negative = arm.found, arm.rare, arm.negative
    if arm.raises:
        _checked(builder, stmt, negative, ctx)
        return ctx.holding(found, False).passed(frozenset((r, m, (m,), stmt.lineno - 1) for r, m in negative))
    if _exits_quietly(stmt.body):
        after = ctx.holding(found, False).add(negative).without(arm.absent_if_false)
        return after.under(rare[0]) if rare is not None and not rare[1] else after
    if stmt.orelse and _exits_quietly(stmt.orelse):
        return ctx.holding(found, True).add(arm.positive).without(arm.absent_if_true)
    return ctx


def _visit_target(builder: _FlowBuilder, target: ast.expr, ctx: _Context) -> None:
    """Reads inside an assignment target (``a.b.c = x`` reads ``a.b``)."""
    if type(target) is ast.Attribute or type(target) is ast.Subscript:
        if type(target.value) not in _LEAVES:  # ``self.x = …``: nothing to read in ``self``
            builder.expr(target.value, ctx)
    elif type(target) is ast.Tuple or type(target) is ast.List:
        for elt in target.elts:
            _visit_target(builder, elt, ctx)


def _gate_chain_block(builder: _FlowBuilder, stmt: ast.If, chain: list[tuple[ast.expr, list[ast.stmt]]],
                      ctx: _Context) -> None:
    """Visit ``if hasattr(m, "a"): … elif hasattr(m, "b"): … else: raise`` (see ``_gate_chain``): each branch
    passes the gate, whose members are every branch's, and runs when the tests before it were false."""
    members: dict[str, set[str]] = {}
    for test, _ in chain:
        for receiver, member in _facts(test)[0]:
            members.setdefault(receiver, set()).add(member)
    names: frozenset[str] = frozenset()
    branch = ctx
    for test, body in chain:
        builder.expr(test, branch)
        names |= _names(test)
        positive = _facts(test)[0]
        gates = frozenset((r, m, tuple(sorted(members[r])), stmt.lineno - 1) for r, m in positive)
        builder.block(body, branch.add(positive, names).passed(gates).taking(test, True))
        branch = branch.taking(test, False)
    builder.block(_last_else(stmt), branch.add(conditions=names))


def _flag(builder: _FlowBuilder, target: ast.expr, value: ast.expr, ctx: _Context) -> None:
    """``target`` (a name, an attribute; a keyword argument's name, in ``_call``) is given ``value`` where ``ctx``
    holds: a value that may be true makes it a possible flag there (see ``FunctionFlow.flags``); a local name
    remembers what test of an object its value stands behind (``builder.asking``), so that ``fn = getattr(m, "x",
    None)`` … ``self._fn = fn`` is a state of ``x`` as the direct assignment is (see ``FunctionFlow.states``)."""
    if type(value) is ast.Constant and not value.value:
        # False, None, 0: never makes the flag a test of it looks for, nor a local's value one; an attribute's
        # tests are false after it
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            builder.states[(target.attr, NEVER_TRUE, "")] = None
        return
    if type(target) is ast.Name:
        builder.flags[(target.id, selector(value), ctx.selects)] = None
        asked = _asked_under(builder, value, ctx)  # every value the name is given must ask the same (as for a state)
        builder.asking[target.id] = asked if builder.asking.get(target.id, asked) == asked else _NOTHING_ASKED
    elif type(target) is ast.Attribute:
        builder.flags[(target.attr, selector(value), ctx.selects)] = None
        if type(target.value) is ast.Name and target.value.id == "self":
            member, receiver = _state_of(builder, value, ctx)
            builder.states[(target.attr, member, receiver)] = None


def _state_of(builder: _FlowBuilder, value: ast.expr, ctx: _Context) -> tuple[str, str]:
    """(member, object) a value given to an attribute of ``self`` where ``ctx`` holds stands behind (see
    ``FunctionFlow.states``)."""
    receiver, member = _asked_under(builder, value, ctx)
    called = chain_of(value.func) if not member and type(value) is ast.Call else None
    if called is not None and called[0] == "self":
        member = "()" + dotted(called)  # what the method's own test holds (see ``FunctionFlow.vouches``)
    elif not member and (tested := _tested_method(builder, ctx)) is not None:
        member = "()self." + tested  # set under ``if self._supports_local():``: what that method's test holds
    elif called is not None:
        member = "()" + dotted(called)
    elif not member:
        receiver, member = _read(value)
    return member, receiver


_NOTHING_ASKED: Fact = ("", "")


def _tested_method(builder: _FlowBuilder, ctx: _Context) -> str | None:
    """A method of this instance that an enclosing test calls and holds true (``if self._supports_local():``, not
    one operand of an ``or``), the first by name: its own test of the model is what the branch stands behind."""
    held = held_by(ctx.selects) if ctx.selects else None
    if not held:  # most assignments are under no test that may select an algorithm
        return None
    called = {call.callee[1] for call in builder.calls
              if len(call.callee) == 2 and call.callee[0] == "self" and not call.args and not call.kwargs}
    return next((word for word in sorted(held) if word in called), None)


def _asked_under(builder: _FlowBuilder, value: ast.expr, ctx: _Context) -> Fact:
    """(object, member): what a value assigned where ``ctx`` holds is true only with (see ``_asked_member``), else
    the first member the enclosing tests hold present (``if hasattr(self.model, "m"): self._x = True``)."""
    asked = _asked_member(value, builder.asking)
    if asked is not None or not ctx.facts:  # most values ask nothing, under no test of a member
        return asked or _NOTHING_ASKED
    return next(((r, m) for r, m in sorted(ctx.facts) if r != "*" and m != "*"), _NOTHING_ASKED)


def _read(value: ast.expr) -> Fact:
    """(object, member) a value that is a member read is: an object without it raises there, so the value is never
    one of it (``self._local = self.model.m`` in a ``try`` whose ``except AttributeError`` sets it None)."""
    if isinstance(value, ast.Attribute) and (receiver := chain_of(value.value)):
        return dotted(receiver), value.attr
    return _NOTHING_ASKED


def _asked_member(value: ast.expr, asking: dict[str, Fact]) -> Fact | None:
    """(object, member) ``hasattr(m, "x")``, ``callable(getattr(m, "x", None))`` or ``getattr(m, "x", None)`` asks
    for (``bool(…)`` of one, or ``… is not None``): a value true only when ``m`` has it (not ``getattr(m, "x",
    True)``); so is ``config.flag and hasattr(m,
    "x")`` (the first member an ``and`` asks for), ``m.x if hasattr(m, "x") else None`` (its test's, when the other
    value is a falsy constant), and a local name given such a value (``asking``). Told apart by the value's type
    first: every assignment asks, and most values are calls of something else."""
    if type(value) is ast.Name:
        asked = asking.get(value.id)
        return asked if asked and asked[1] else None
    if type(value) is ast.BoolOp:
        if type(value.op) is not ast.And:
            return None
        # the ``hasattr`` tests first, each member the first one's object must have (``"a+b"``): a ``getattr(…,
        # False)`` beside them is more often a config's value than a model's test
        asks = [(asked, _is_hasattr(operand)) for operand in value.values if (asked := _asked_member(operand, asking))]
        present = [asked for asked, presence in asks if presence]
        if present:
            return present[0][0], "+".join(member for receiver, member in present if receiver == present[0][0])
        return asks[0][0] if asks else None
    if type(value) is ast.IfExp:
        if type(value.orelse) is ast.Constant and not value.orelse.value:
            return _asked_member(value.test, asking) or _asked_member(value.body, asking)
        return None
    if type(value) is ast.Compare:
        if not (len(value.ops) == 1 and type(value.ops[0]) is ast.IsNot
                and type(value.comparators[0]) is ast.Constant and value.comparators[0].value is None):
            return None
        left = value.left  # ``getattr(m, "x", None) is not None`` (a ``False`` default is never None: true always)
        if not (type(left) is ast.Call and type(left.func) is ast.Name and left.func.id == "getattr"
                and len(left.args) == 3 and type(left.args[2]) is ast.Constant and left.args[2].value is None):
            return None
        value = left
    return _asked_by_call(value) if type(value) is ast.Call else None


def _asked_by_call(call: ast.Call) -> Fact | None:
    """:func:`_asked_member` of a call: ``hasattr(m, "x")``, ``getattr(m, "x", <a falsy constant>)``, or
    ``callable(…)`` or ``bool(…)`` of one."""
    func = call.func
    if type(func) is not ast.Name:
        return None
    if func.id in ("callable", "bool") and len(call.args) == 1 and not call.keywords:
        inner = call.args[0]
        if type(inner) is not ast.Call or type(inner.func) is not ast.Name:
            return None
        call, func = inner, inner.func
    args = call.args
    if func.id in ("hasattr", "getattr") and len(args) >= 2 and type(args[1]) is ast.Constant \
            and isinstance(args[1].value, str) \
            and (func.id == "hasattr" or len(args) == 3 and type(args[2]) is ast.Constant and not args[2].value) \
            and (receiver := chain_of(args[0])) is not None:
        return dotted(receiver), args[1].value
    return None


def _is_hasattr(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"


def _validated(test: ast.expr, negative: frozenset[Fact], ctx: _Context) -> Iterator[tuple[str, str, str]]:
    """(word, member, object) for ``if <test>: raise``: past it, the member is present wherever the word holds.
    One flag the statement runs past and nothing else (``if not self.use_local: return`` before ``if not
    hasattr(self.model, "m"): raise``; not ``if self.use_local and self.tp > 1:``, true without the check running)
    with what the test's failing holds present; and ``flag and not hasattr(m, "x")`` with one flag and one member
    (``not hasattr(m, "a") and not hasattr(m, "b")`` proves only one of them)."""
    if len(ctx.taken) == 1 and not any(_unknown(f) for f in ctx.selects):
        (word,) = ctx.taken
        for receiver, member in sorted(negative):  # in order: a summary is the same in every process
            yield word, member, receiver
    flagged = _flag_and_absent(test)
    if flagged is not None:
        flag, (receiver, member) = flagged
        yield cast(Formula, selector(flag))[1], member, receiver


def _flag_and_absent(test: ast.expr) -> tuple[ast.expr, Fact] | None:
    """``flag and not hasattr(m, "x")``: the one flag (a name, an attribute) and the one member it asks absent.
    ``not hasattr(m, "a") and not hasattr(m, "b")`` proves only one of them; ``flag and n > 1 and …`` holds
    without the member's test deciding."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return None
    parts = [(operand, _facts(operand)[1]) for operand in test.values]
    flags = [operand for operand, absent in parts if not absent]
    absent = [found for _, found in parts if found]
    if len(flags) == 1 and len(absent) == 1 and len(absent[0]) == 1 \
            and (found := selector(flags[0])) is not None and found[0] == "n":
        return flags[0], next(iter(absent[0]))
    return None


def _unknown(f: Formula) -> bool:
    """Whether the formula holds a test that selects nothing known (``self.tp > 1``)."""
    return f[0] == "?" or f[0] in ("&", "|", "!") and any(_unknown(part) for part in f[1:])


def _checked(builder: _FlowBuilder, stmt: ast.If, negative: frozenset[Fact], ctx: _Context) -> None:
    """``if not hasattr(m, "x"): raise``: a use of ``m.x`` at the check, kept when nothing after it in the
    function uses the member (a validation the speculator runs while loading, vLLM's
    ``_validate_local_argmax_reduction``: the uses are in another method, and a run without it stops here).
    ``if flag and not hasattr(m, "x"): raise`` is that check where the flag holds, as it is nested under ``if
    flag:`` or past ``if not flag: return``."""
    checked = [(r, m, ctx) for r, m in sorted(negative)]
    test = stmt.test
    if not negative and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        # ``if <tests> and not hasattr(m, "x"): raise``: the check of ``x`` where the other tests hold, as nested
        absent = [found for operand in test.values if (found := _facts(operand)[1])]
        if len(absent) == 1 and len(absent[0]) == 1:
            where = ctx
            for operand in test.values:
                if not _facts(operand)[1]:
                    where = where.add(conditions=_names(operand)).taking(operand, True)
            ((receiver, member),) = absent[0]
            checked.append((receiver, member, where))
    builder.checks += [_make_use(tuple(r.split(".")), m, builder.lines.node_span(stmt.test), False, None, False,
                                 where.passed(frozenset({(r, m, (m,), stmt.lineno - 1)})),
                                 builder.lines.text(stmt.lineno)) for r, m, where in checked if m != "*"]


def _attribute(builder: _FlowBuilder, node: ast.Attribute, receiver: Chain | None, ctx: _Context, is_call: bool,
               arity: int | None) -> None:
    """Record the use ``node`` is (``receiver``: its value's chain) and every use inside it. The receivers of
    ``a.b.c.d`` are the prefixes of one chain: found once, not once per attribute (a walk down a chain of n
    attributes otherwise reads n(n+1)/2 nodes). A module function: ``_FlowBuilder`` stays under the limit."""
    _use(builder, node, receiver, ctx, is_call, arity)
    inner = node.value
    while type(inner) is ast.Attribute:
        receiver = receiver[:-1] if receiver is not None else None
        _use(builder, inner, receiver, ctx, False, None)
        inner = inner.value
    if type(inner) not in _LEAVES:
        builder.expr(inner, ctx)


def _use(builder: _FlowBuilder, node: ast.Attribute, receiver: Chain | None, ctx: _Context, is_call: bool,
         arity: int | None) -> None:
    if receiver is None or type(node.ctx) is not ast.Load:
        return
    lines = builder.lines
    builder.uses.append(_make_use(receiver, node.attr, lines.attr_span(node), is_call, arity,
                                  _is_guarded(ctx, receiver, node.attr) if ctx.facts else False, ctx,
                                  lines.text(node.end_lineno)))  # most uses are under no guard: no call


def _expression_statement(builder: _FlowBuilder, value: ast.expr, ctx: _Context) -> _Context:
    """Visit an expression statement. A call that is one (its value unused) marks its use so: that use is the
    first one the visit appended (``_call`` records the member before its receiver and arguments)."""
    before = len(builder.uses)
    builder.expr(value, ctx)
    uses = builder.uses
    if type(value) is ast.Call and type(value.func) is ast.Attribute and len(uses) > before \
            and uses[before].is_call and uses[before].member == value.func.attr:
        uses[before] = _changed(uses[before], statement=True)
    return ctx


def _make_use(receiver: Chain, member: str, span: Span, is_call: bool, arity: int | None, guarded: bool,
              ctx: _Context, text: str) -> Use:
    facts, conditions, gates, absent, condition, classes, taken, selects = ctx  # one read, not eight
    gate: tuple[str, ...] = ()
    gate_line: int | None = None
    alternative_of: tuple[str, ...] = ()
    above: tuple[str, ...] = ()
    if gates or absent:
        where = dotted(receiver)
        gate, gate_line = next(((members, line) for r, m, members, line in gates
                                if r == where and m == member), ((), None))
        if gate:
            guarded = False  # behind a gate the member is required: the engine refused the run otherwise
        alternative_of = tuple(sorted(m for r, m in absent if r == where and m != member))
        holder = dotted(receiver[:-1])
        above = tuple(sorted(m for r, m in absent if r == holder))
    use = _NEW(Use)  # see ``_changed``: what ``Use(...)`` makes, at a third of the cost
    use.__dict__.update(receiver=receiver, member=member, span=span, is_call=is_call, arity=arity, guarded=guarded,
                        conditions=conditions, text=text, gate=gate, alternative_of=alternative_of,
                        condition=condition, taken=taken, gate_line=gate_line, condition_classes=classes,
                        shared=False, statement=False, selects=selects, vouched=facts, above=above)
    return use


_NEW = object.__new__


_Record = TypeVar("_Record", CallFlow, FunctionFlow)


def _built(cls: type[_Record], fields: dict[str, object]) -> _Record:
    """``cls(**fields)`` given every field, made as ``_make_use`` makes a use: without the frozen ``__init__`` (a
    worker file's calls come by the thousand, its functions by the hundred; neither record has a
    ``__post_init__`` or a field outside ``__init__``)."""
    made = _NEW(cls)
    made.__dict__.update(fields)
    return made


def _changed(use: Use, **changes: object) -> Use:
    """``dataclasses.replace(use, **changes)``, made as ``_make_use`` makes a use: without the frozen
    ``__init__``, which sets each of its 16 fields through ``object.__setattr__`` (``Use`` has no
    ``__post_init__`` and no field outside ``__init__``). A worker file's flow records make uses by the ten
    thousand, and building them so was a tenth of their cost."""
    copy = _NEW(Use)
    copy.__dict__.update(use.__dict__, **changes)
    return copy


def _assigned(target: ast.expr, value: ast.expr) -> Iterator[tuple[ast.expr, Chain]]:
    """(target, chain) for each name an assignment binds to a chain: element-wise for tuples, both branches
    of ``a if c else b``, every operand of ``a or b``."""
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts):
        for t, v in zip(target.elts, value.elts):
            yield from _assigned(t, v)
        return
    if isinstance(value, ast.IfExp):
        yield from _assigned(target, value.body)
        yield from _assigned(target, value.orelse)
        return
    if isinstance(value, ast.BoolOp):
        for operand in value.values:
            yield from _assigned(target, operand)
        return
    source = chain_of(value)
    if source is not None:
        yield target, source


_SPLIT = frozenset({ast.Tuple, ast.List, ast.IfExp, ast.BoolOp})  # values ``_assigned`` reads part by part


def _gate_chain(stmt: ast.If) -> list[tuple[ast.expr, list[ast.stmt]]] | None:
    """The (test, body) pairs of ``if hasattr(m, "a"): … elif hasattr(m, "b"): … else: raise``, when every
    test vouches for some member and the final ``else`` raises: a gate whose members are a disjunction."""
    chain = []
    current: ast.stmt = stmt
    while isinstance(current, ast.If):
        if not _facts(current.test)[0] or any(r == "*" for r, _ in _facts(current.test)[0]):
            return None
        chain.append((current.test, current.body))
        if len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
            current = current.orelse[0]
        else:
            return chain if len(chain) >= 2 and _raises(current.orelse) else None
    return None


def _last_else(stmt: ast.If) -> list[ast.stmt]:
    while len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If):
        stmt = stmt.orelse[0]
    return stmt.orelse


def _absent(test: ast.expr) -> tuple[frozenset[Fact], frozenset[Fact]]:
    """Members known *missing* when ``test`` is true, and when it is false (``hasattr`` tests only)."""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in ("hasattr", "callable"):
        return frozenset(), _facts(test)[0]
    if isinstance(test, ast.Compare) and _facts(test)[0] | _facts(test)[1]:
        positive, negative = _facts(test)  # ``getattr(m, "x", None) is (not) None``
        return negative, positive
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        if_true, if_false = _absent(test.operand)
        return if_false, if_true
    if isinstance(test, ast.BoolOp):
        parts = [_absent(v) for v in test.values]
        if isinstance(test.op, ast.Or):  # false only when every operand is false
            return frozenset(), frozenset().union(*(f for _, f in parts))
        return frozenset().union(*(t for t, _ in parts)), frozenset()
    return frozenset(), frozenset()


def _optional_getattr(value: ast.expr) -> ast.Call | None:
    """``getattr(m, "x", None)``, bare or as the one argument of a call (``unwrap(getattr(m, "x", None))``)."""
    if type(value) is not ast.Call:
        return None
    if len(value.args) == 1 and not value.keywords:
        inner = value.args[0]
        if type(inner) is ast.Call and type(inner.func) is ast.Name and inner.func.id == "getattr":
            value = inner
    if type(value.func) is ast.Name and value.func.id == "getattr" \
            and len(value.args) == 3 and type(value.args[2]) is ast.Constant and value.args[2].value is None:
        return value
    return None


def _none_tests(test: ast.expr) -> list[str]:
    """Names ``test`` is true for when they are None: ``v is None``, ``not v``, or one of those in an ``or``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [name for operand in test.values for name in _none_tests(operand)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return [test.left.id]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return [test.operand.id]
    return []


def env_predicates(body: list[ast.stmt], lines: Lines) -> dict[str, str]:
    """Methods among ``body`` that answer False unless an environment flag is set (their first statement is
    ``if not envs.X.get(): return False``): a test calling one is as rare as the flag."""
    found = {}
    for stmt in body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or not stmt.body:
            continue
        first = stmt.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(stmt.body) > 1:
            first = stmt.body[1]  # the docstring
        if isinstance(first, ast.If) and first.body and isinstance(first.body[-1], ast.Return) \
                and (first.body[-1].value is None or (isinstance(first.body[-1].value, ast.Constant)
                                                       and first.body[-1].value.value in (False, None))):
            rare = _rare_condition(first.test, lines, {})
            if rare is not None and not rare[1] and _reads_environment(first.test):
                found[stmt.name] = rare[0]
    return found


def _rare_condition(test: ast.expr, lines: Lines, predicates: dict[str, str]) -> tuple[str, bool] | None:
    """(the rare situation as written, whether the test's *true* branch is the rare one) for a test a run
    rarely meets: an
    environment flag (``envs.SGLANG_X.get()``, ``os.environ.get``, ``get_bool_env_var``; flags default off),
    a call of a method that is False unless such a flag is set, a model-type comparison
    (``config.model_type == "x"``) or an ``isinstance`` test against a config class."""
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if isinstance(test, ast.BoolOp):
        return None  # a mix of conditions: which branch is rare is not clear
    if isinstance(test, ast.Call) and predicates:
        callee = chain_of(test.func) or ()
        if callee[-1:] and callee[-1] in predicates and (len(callee) == 1 or callee[:-1] == ("self",)):
            return predicates[callee[-1]], not negated
    if not (_reads_environment(test) or _tests_model_type(test)):
        return None
    text = lines.text(test.lineno)
    if test.lineno == test.end_lineno and 0 < test.lineno <= len(lines.lines):  # the test alone, not its line
        text = lines.lines[test.lineno - 1].encode("utf-8")[test.col_offset:test.end_col_offset].decode(
            "utf-8", errors="replace") or text
    return " ".join(text.split()), not negated


def _config_classes(test: ast.expr) -> tuple[str, ...]:
    """``isinstance(cfg, (AConfig, BConfig))`` → ``("AConfig", "BConfig")``: a class whose config is none of
    them (nor a subclass) provably never takes the branch."""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2:
        kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        names = tuple((chain_of(k) or ("",))[-1] for k in kinds)
        if all(name.endswith("Config") for name in names):
            return names
    return ()


def _reads_environment(test: ast.expr) -> bool:
    for node in ast.walk(test):
        chain = chain_of(node) if isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)) else None
        if not chain:
            continue
        if chain[0] == "envs" or "environ" in chain or any(part in _ENV_READERS for part in chain):
            return True
    return False


def _tests_model_type(test: ast.expr) -> bool:
    if isinstance(test, ast.Compare):
        return any(isinstance(node, ast.Attribute) and node.attr in ("model_type", "architectures")
                   for node in ast.walk(test))
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2:
        kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        return all((chain_of(k) or ("",))[-1].endswith("Config") for k in kinds)
    return False


def _children(node: ast.AST) -> Iterable[ast.AST]:
    """``ast.iter_child_nodes`` without its per-field ``isinstance`` on the common expression kinds (an operator
    and a keyword, nodes that name nothing, stand for their values or not at all)."""
    if type(node) is ast.Subscript:
        return node.value, node.slice
    if type(node) is ast.BinOp:
        return node.left, node.right
    if type(node) is ast.Compare:
        return [node.left, *node.comparators]
    if type(node) is ast.Tuple or type(node) is ast.List or type(node) is ast.Set:
        return node.elts
    if type(node) is ast.UnaryOp:
        return (node.operand,)
    if type(node) is ast.Call:
        return [node.func, *node.args, *[keyword.value for keyword in node.keywords]]
    if type(node) is ast.BoolOp:
        return node.values
    return ast.iter_child_nodes(node)


def _is_guarded(ctx: _Context, receiver: Chain, member: str) -> bool:
    if not ctx.facts:  # most code is under no guard at all
        return False
    text = dotted(receiver)
    return ("*", "*") in ctx.facts or (text, member) in ctx.facts or (text, "*") in ctx.facts


def _facts(test: ast.expr) -> tuple[frozenset[Fact], frozenset[Fact]]:
    """Guards known when ``test`` is true, and when it is false. Told apart by the test's type first: every
    operand of an ``and``/``or`` is asked, and most are none of these shapes."""
    if type(test) is ast.Call:
        return _call_facts(test)
    if type(test) is ast.NamedExpr:  # ``(fn := getattr(m, "x", None)) is not None``
        return _facts(test.value)
    if type(test) is ast.Compare:
        if len(test.ops) == 1 and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None \
                and type(test.ops[0]) in (ast.Is, ast.IsNot):
            positive, _ = _facts(test.left)  # ``getattr(m, "x", None) is not None``
            return (positive, frozenset()) if type(test.ops[0]) is ast.IsNot else (frozenset(), positive)
        return _NO_FACTS
    if type(test) is ast.UnaryOp:
        if type(test.op) is ast.Not:
            positive, negative = _facts(test.operand)
            return negative, positive
        return _NO_FACTS
    if type(test) is ast.BoolOp:
        parts = [_facts(v) for v in test.values]
        if type(test.op) is ast.And:
            return frozenset().union(*(p for p, _ in parts)), frozenset()
        return frozenset(), frozenset().union(*(n for _, n in parts))
    return _NO_FACTS


_NO_FACTS: tuple[frozenset[Fact], frozenset[Fact]] = (frozenset(), frozenset())


def _call_facts(test: ast.Call) -> tuple[frozenset[Fact], frozenset[Fact]]:
    """:func:`_facts` of a call: ``hasattr(m, "x")``, ``getattr(m, "x", None)`` (m.x exists in the body),
    ``callable(<one of those>)`` and ``isinstance(m, C)`` (a runtime-checkable Protocol or a class: every member
    is vouched for)."""
    func, args = test.func, test.args
    if type(func) is not ast.Name or not args:
        return _NO_FACTS
    name = func.id
    if name == "hasattr" or name == "getattr":
        if len(args) >= (2 if name == "hasattr" else 3) and type(args[1]) is ast.Constant \
                and isinstance(args[1].value, str) and (receiver := chain_of(args[0])) is not None:
            return frozenset({(dotted(receiver), args[1].value)}), frozenset()
        return _NO_FACTS
    if name == "callable":
        return _facts(args[0])
    if name == "isinstance" and (receiver := chain_of(args[0])) is not None:
        return frozenset({(dotted(receiver), "*")}), frozenset()
    return _NO_FACTS


def _names(test: ast.expr) -> frozenset[str]:
    """The names and attribute names anywhere in ``test``: what ``ast.walk`` would find, without walking
    into a name's or a constant's fields (nothing there is named) or a generator per node (every ``if`` of a
    worker asks)."""
    out = set()
    stack: list[ast.AST] = [test]
    while stack:
        node = stack.pop()
        if type(node) is ast.Name:
            out.add(node.id)
        elif type(node) is ast.Attribute:
            out.add(node.attr)
            stack.append(node.value)
        elif type(node) is not ast.Constant:
            stack.extend(_children(node))
    return frozenset(out)


def _raises(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _exits_quietly(body: list[ast.stmt]) -> bool:
    """Ends in return/continue/break: code after the ``if`` only runs when the test was false.

    A ``raise`` does not count: ``if not hasattr(m, "x"): raise ...`` asserts the member, the call stays
    required.
    """
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Continue, ast.Break))


def _match(builder: _FlowBuilder, stmt: ast.Match, ctx: _Context) -> None:
    """``match <subject>:``: a case whose pattern is a name (``case "dspark":``, ``case Algo.EAGLE3 | Algo.EAGLE:``)
    holds only for it, as ``subject == "dspark"`` would, and only where no earlier such case (without a guard)
    matched; a guard holds in its body as an ``if`` would. A pattern of any other shape selects nothing."""
    builder.expr(stmt.subject, ctx)
    earlier: list[Formula] = []
    for case in stmt.cases:
        picked = _case_formula(case.pattern)
        branch = ctx
        for before in earlier:
            branch = branch.selecting(negate(before))
        if picked is not None:
            branch = branch.selecting(picked)
        if case.guard is not None:
            builder.expr(case.guard, branch)
            branch = branch.taking(case.guard, True)
        builder.block(case.body, branch)
        if picked is not None and case.guard is None:
            earlier.append(picked)


def _case_formula(pattern: ast.pattern) -> Formula | None:
    """The comparison a case pattern makes: a value that names an algorithm, or an ``|`` of such values."""
    if isinstance(pattern, ast.MatchValue):
        named = value_of(pattern.value)
        return ("=", named) if named is not None else None
    if isinstance(pattern, ast.MatchOr):
        parts = [_case_formula(p) for p in pattern.patterns]
        return ("|", *parts) if parts and all(p is not None for p in parts) else None
    return None


def _catches_attribute_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((chain_of(k) or ("",))[-1] in _CATCHES_MISSING_ATTRIBUTE for k in kinds)


def _return_statement(builder: _FlowBuilder, value: ast.expr | None, ctx: _Context) -> None:
    """``return <value>``: its reads; a returned name is what the function gives (see ``FunctionFlow.aliases``),
    and a returned class one it builds (``return EAGLEWorker``)."""
    if value is None:
        return
    builder.expr(value, ctx)
    if type(value) is ast.Name:
        builder.aliases.append((RETURNED, (value.id,)))
        if value.id[:1].isupper():
            builder.builds[((value.id,), ctx.selects)] = None


def _reraises(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(node, ast.Raise) for stmt in handler.body for node in ast.walk(stmt))


def function_flow(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, class_name: str | None,
                   lines: Lines, predicates: dict[str, str] | None = None) -> FunctionFlow:
    params = tuple(a.arg for a in node.args.posonlyargs + node.args.args)
    kwonly = tuple(a.arg for a in node.args.kwonlyargs)
    if any(_decorator_name(d) == "jit" for d in node.decorator_list):
        # a kernel (``@triton.jit``): its body is compiled for the device and takes tensors and pointers, never a
        # model object, so nothing in it is a use, an alias or a call to follow (the speculative folders hold
        # many, each a screen of ``tl.*`` reads)
        return FunctionFlow(qualname, class_name, params, kwonly, (), (), ())
    builder = _FlowBuilder(lines, predicates=predicates or {})
    for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
        try:
            builder.expr(default, _Context())
        except RecursionError:
            pass
    ctx = _Context()
    for stmt in node.body:
        try:
            ctx = builder.stmt(stmt, ctx)
        except RecursionError:
            # An expression nested past Python's recursion limit (thousands of levels): this statement's
            # uses are lost, the function's others and the rest of the file are kept.
            continue
    checked = {(use.receiver, use.member, use.gate_line) for use in builder.uses if use.gate}
    uses = builder.uses + [use for use in builder.checks
                           if (use.receiver, use.member, use.gate_line) not in checked]
    aliases = builder.aliases + _gives(node, class_name, params + kwonly)
    return _built(FunctionFlow, {
        "qualname": qualname, "class_name": class_name, "params": params, "kwonly": kwonly,
        "aliases": tuple(aliases), "calls": tuple(builder.calls), "uses": tuple(uses), "routes": _routes(node, lines),
        "flags": tuple(builder.flags), "builds": tuple(builder.builds), "returns": returned(node.body),
        "states": tuple(builder.states), "vouches": _vouches(node.body, params + kwonly),
        "validates": tuple(builder.validates)})


def _gives(node: ast.FunctionDef | ast.AsyncFunctionDef, class_name: str | None,
           params: tuple[str, ...]) -> list[tuple[Chain, Chain]]:
    """A method of no argument but its instance that returns a part of it (``return
    self.target_worker.model_runner.model``) stands for it where the instance calls it: ``self.<name>()`` is that
    part, as an attribute ``self.<name>()`` (a property's ``self.<name>``, read without the call) of its class
    (see ``FunctionFlow.aliases``). The returns of functions nested in it are theirs, not its."""
    if class_name is None or params != ("self",):
        return []
    given: dict[Chain, None] = {}
    pending: list[ast.stmt] = list(node.body)
    while pending:  # statements only: a return is one, and never inside an expression
        current = pending.pop()
        if type(current) is ast.Return:
            if current.value is not None:
                returned = chain_of(current.value)
                if returned is not None and len(returned) >= 2 and returned[0] == "self":
                    given[returned] = None
        elif type(current) in _BLOCKS:
            pending += blocks_of(current)
    if not given:
        return []
    name = node.name if any(_decorator_name(d) in ("property", "cached_property") for d in node.decorator_list) \
        else node.name + "()"
    return [(("self", name), chain) for chain in sorted(given)]


# statements with blocks of their own statements (a nested function's or class's returns are not this one's)
_BLOCKS = frozenset(getattr(ast, name) for name in (
    "If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar", "Match") if hasattr(ast, name))


def _decorator_name(decorator: ast.expr) -> str | None:
    found = chain_of(decorator.func if isinstance(decorator, ast.Call) else decorator)
    return found[-1] if found else None


def _vouches(body: list[ast.stmt], params: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(object, member) the top-level ``if not <test>: return <false>`` statements hold for the rest of the
    body, or a last ``return hasattr(p, "x")`` (``bool(getattr(p, "x", None))``) holds for its value, where the
    object is a parameter or one of its attributes (``self.model``) (see ``FunctionFlow.vouches``)."""
    found = []
    for stmt in body:
        if type(stmt) is ast.If and not stmt.orelse and len(stmt.body) == 1 and type(stmt.body[0]) is ast.Return \
                and (stmt.body[0].value is None or type(stmt.body[0].value) is ast.Constant
                     and not stmt.body[0].value.value):
            found += [(r, m) for r, m in sorted(_facts(stmt.test)[1]) if r.partition(".")[0] in params]
    last = body[-1] if body else None
    if type(last) is ast.Return and last.value is not None:
        value = last.value
        if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "bool" and len(value.args) == 1:
            value = value.args[0]
        asked = _asked_member(value, {})
        if asked is not None and asked[0].partition(".")[0] in params:
            found.append(asked)
    return tuple(found)


def _routes(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: Lines) -> tuple[Route, ...]:
    """A function's routes (see ``routes``), looked for only when its text tests a class or an architecture:
    most never do. Its lines are searched joined (neither word holds a line break): one search of each word,
    not two per line."""
    text = "\n".join(lines.lines[node.lineno - 1:node.end_lineno])
    return routes(node) if "isinstance(" in text or ".architectures" in text else ()
