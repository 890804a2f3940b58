"""What a class statement provides, read from its ``ast``: bases, members, delegate attributes, factories,
``__getattr__`` forwarding and suppression comments (a :class:`~spec_contract.engine.summarise.summary.ClassSummary`).

Members are every name an instance has through the class body: methods, properties, class attributes,
nested classes, and ``self.<name> = …`` anywhere in a method. A delegate is ``self.<attr> = <Class>(...)``:
a candidate inner model of a wrapper.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import NamedTuple, cast

from spec_contract.engine.results import Span
from spec_contract.engine.summarise.flow import env_predicates, function_flow
from spec_contract.engine.summarise.summary import (
    ARCHITECTURE,
    REGISTRY,
    Chain,
    ClassSummary,
    Delegate,
    FunctionFlow,
    Member,
    UnreadMethod,
)
from spec_contract.engine.summarise.suppression import COMMENT, suppressed_codes
from spec_contract.engine.summarise.syntax import Lines, blocks_of, chain_of

_PROPERTY_DECORATORS = {"property", "cached_property"}


def _suppressed(lines: Lines, node: ast.ClassDef) -> frozenset[str]:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    codes: set[str] = set()
    for lineno in {node.lineno, first - 1}:
        if 0 < lineno <= len(lines.lines):
            match = COMMENT.search(lines.lines[lineno - 1])
            if match:
                codes.update(suppressed_codes(match))
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


def summarise_class(node: ast.ClassDef, outer: str, lines: Lines, out: list[ClassSummary],
           functions: list[FunctionFlow] | None, unread: dict[int, tuple[int, int]] | None = None) -> None:
    """The summary of a class (and before it, those of the classes nested in it) into ``out``; ``unread``: the
    methods, by ``def`` line, whose body a skeleton left out though it returns something (their lines)."""
    qualname = f"{outer}.{node.name}" if outer else node.name
    members: dict[str, Member] = {}
    delegates: list[Delegate] = []
    getattr_forward: str | None = None
    instance_attrs: dict[str, Member] = {}
    factories: list[tuple[str, tuple[Chain, ...]]] = []
    predicates: dict[str, str] | None = None  # the class's env-flag predicates, found for its first method
    param_defaults: list[tuple[str, str, Chain]] = []
    language_attrs: list[str] = []
    config: Chain | None = None
    calls_up: list[tuple[str, Chain]] = []
    forwards: list[tuple[str, str]] = []
    unguarded: list[tuple[str, str]] = []

    # Architecture names matter only where the class's text spells ``architectures`` (a keyword, an
    # attribute): elsewhere no local is looked at for them (a parser reads a non-ASCII identifier as its NFKC
    # form, so such a class is always looked at)
    source = "\n".join(lines.lines[node.lineno - 1:node.end_lineno])
    architectures_named = "architectures" in source or not source.isascii()
    skipped: list[UnreadMethod] = []
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # an editor buffer's method that only moved since its class was last read is not read again
            method = _method_facts(stmt, lines, architectures_named, keep=functions is None and not unread)
            if method is None:  # an accessor (``@x.setter``): it adds nothing
                continue
            if unread and stmt.lineno in unread:
                skipped.append(UnreadMethod(stmt.name, len(factories), unread[stmt.lineno]))
            if method.member.kind == "property":
                members.setdefault(stmt.name, method.member)
            else:
                members[stmt.name] = method.member
            if stmt.name == "__init__":
                config = method.config
            if stmt.name == "__getattr__":
                getattr_forward = method.getattr_forward
            param_defaults += method.param_defaults
            calls_up += method.calls_up
            forwards += method.forwards
            unguarded += method.unguarded
            if method.factories:
                factories.append((stmt.name, method.factories))
            language_attrs += [a for a in method.language_attrs if a not in language_attrs]
            for attr in method.attrs:
                instance_attrs.setdefault(attr.name, attr)
            delegates += method.delegates
            if functions is not None:
                if predicates is None:
                    predicates = env_predicates(node.body, lines)
                functions.append(function_flow(stmt, f"{qualname}.{stmt.name}", qualname, lines, predicates))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for name_node in _names_in_target(target):
                    members.setdefault(name_node.id, _member(name_node.id, "class_attribute", lines.node_span(name_node)))
            # ``model_cls = DeepseekV2Model``: ``self.model = self.model_cls(...)`` builds one, as a factory
            # method would (a subclass's own ``model_cls`` comes first along the MRO)
            value = chain_of(stmt.value) if stmt.value is not None else None
            if value is not None and "()" not in value and "[]" not in value and value[-1][:1].isupper() \
                    and len(targets) == 1 and isinstance(targets[0], ast.Name):
                factories.append((targets[0].id, (value,)))
        elif isinstance(stmt, ast.ClassDef):
            members.setdefault(stmt.name, _member(stmt.name, "class_attribute", lines.name_span(stmt.lineno, "class", stmt.name)))
            summarise_class(stmt, qualname, lines, out, functions)
    for name, member in instance_attrs.items():
        members.setdefault(name, member)
    bases = tuple(c for c in (chain_of(b) for b in node.bases) if c is not None)
    summary = _NEW(ClassSummary)  # every field given: made without the frozen ``__init__``, as members are
    summary.__dict__.update(
        name=node.name, qualname=qualname, span=lines.name_span(node.lineno, "class", node.name), bases=bases,
        members=tuple(members.values()), delegates=tuple(delegates),
        getattr_forward=getattr_forward, factories=tuple(factories), suppressed=_suppressed(lines, node),
        param_defaults=tuple(param_defaults), language_attrs=tuple(language_attrs), config=config,
        calls_up=tuple(dict.fromkeys(calls_up)), forwards=tuple(dict.fromkeys(forwards)),
        unguarded_forwards=tuple(dict.fromkeys(unguarded)), unread=tuple(skipped),
    )
    out.append(summary)


class _MethodFacts(NamedTuple):
    """What one method adds to its class's summary, with every span at the ``def`` line ``line``."""

    line: int
    architectures_named: bool  # what it was read with (see ``summarise_class``)
    member: Member
    config: Chain | None
    getattr_forward: str | None
    param_defaults: tuple[tuple[str, str, Chain], ...]
    calls_up: tuple[tuple[str, Chain], ...]
    forwards: tuple[tuple[str, str], ...]
    unguarded: tuple[tuple[str, str], ...]
    factories: tuple[Chain, ...]
    language_attrs: tuple[str, ...]
    attrs: tuple[Member, ...]  # ``self.<name> = …``, each name at its first assignment
    delegates: tuple[Delegate, ...]


def _method_facts(stmt: ast.FunctionDef | ast.AsyncFunctionDef, lines: Lines, architectures_named: bool,
                  keep: bool) -> _MethodFacts | None:
    """What the method adds to its class's summary (None: an accessor, which adds nothing). With ``keep``, the
    facts are kept on the node: an editor buffer reuses a method's nodes while its text stays (moved by a new
    line above it, see ``statements.BodyStatements``), and its facts are then only moved, not read again (the
    line texts they were read from moved with them); a keystroke in a 3,000-line class reads one method."""
    kept: _MethodFacts | None = stmt.__dict__.get("_spec_contract_facts")
    if kept is not None and kept.architectures_named == architectures_named:
        return kept if kept.line == stmt.lineno else _moved_facts(kept, stmt.lineno)
    decorators = _decorator_names(stmt)
    if "accessor" in decorators:
        return None
    span = lines.name_span(stmt.lineno, "def", stmt.name)
    if decorators & _PROPERTY_DECORATORS:
        member = _member(stmt.name, "property", span)
    else:
        kind = "async_method" if isinstance(stmt, ast.AsyncFunctionDef) else "method"
        low, high = _arg_bounds(stmt, drop_first="staticmethod" not in decorators)
        member = _member(stmt.name, kind, span, low, high)
    defaults = _class_defaults(stmt)
    body = _Body(stmt.name, defaults, architectures_named)
    body.read(stmt.body)
    instances = body.local_instances() if body.local_classes else {}
    attrs: dict[str, Member] = {}
    delegates: list[Delegate] = []
    for sub in body.assigned:
        _collect_self_assignment(sub, lines, attrs, delegates, body.local_classes, instances,
                                 (stmt.name, defaults), body.architectures)
    name = stmt.name
    # (most methods pass nothing up, forward nothing and open no ``with``: no comprehension is made for them)
    facts = _MethodFacts(
        stmt.lineno, architectures_named, member,
        _config_annotation(stmt) if name == "__init__" else None,
        _getattr_target(stmt) if name == "__getattr__" else None,
        tuple([(name, param, chain) for param, chain in defaults.items()] + body.passed_up)
        if defaults or body.passed_up else (),
        tuple([(name, target) for target in body.up]) if body.up else (),
        tuple([(name, attr) for attr in body.forwarded]) if body.forwarded else (),
        tuple([(name, attr) for attr in body.forwarded if not _tests_for(stmt, attr, name, lines)])
        if body.forwarded else (),
        body.returned_constructors(), tuple(_marked_language_attrs(body.withs)) if body.withs else (),
        tuple(attrs.values()), tuple(delegates))
    if keep:
        stmt.__dict__["_spec_contract_facts"] = facts
    return facts


def _moved_facts(facts: _MethodFacts, line: int) -> _MethodFacts:
    """``facts`` of a method now at ``line`` (kept on its node for the next move)."""
    lines = line - facts.line
    return facts._replace(
        line=line, member=replace(facts.member, span=facts.member.span.moved(0, lines)),
        attrs=tuple(replace(a, span=a.span.moved(0, lines)) for a in facts.attrs),
        delegates=tuple(replace(d, span=d.span.moved(0, lines)) for d in facts.delegates))


def method_factories(stmt: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[Chain, ...]:
    """What a method returns instances of, read as :func:`summarise_class` reads it (for a method whose body
    was left unparsed then)."""
    body = _Body(stmt.name, _class_defaults(stmt), False)
    body.read(stmt.body)
    return body.returned_constructors()


class _Body:
    """What one method's body builds, read in one pass over its statements (nested blocks included, never
    every expression): what each local name called as a constructor stands for, the architecture names its
    locals pin down, its calls of the same method of a base, the members it forwards, and the statements the
    rest is read from afterwards (returns, assignments, ``with`` blocks), once every local is known.

    One pass instead of one per fact: a model file's methods are summarised by the thousand, and each pass
    dispatched on every statement again.
    """

    def __init__(self, method: str, defaults: dict[str, Chain], architectures_named: bool) -> None:
        self.method = method
        # What a local name called as a constructor may stand for (see ``_local``)
        self.local_classes: dict[str, list[Chain]] = {param: [chain] for param, chain in defaults.items()}
        self.architectures: dict[str, list[str]] = {}  # see ``_architecture_local``
        self._architectures_named = architectures_named  # else no local can pin an architecture name down
        self.passed_up: list[tuple[str, str, Chain]] = []  # see ``_call_up``
        self.up: list[Chain] = []
        self.forwarded: list[str] = []  # see ``_forward``
        self.assigned: list[ast.Assign | ast.AnnAssign] = []  # in order: the ``self.<attr> = …`` to read
        self.withs: list[ast.stmt] = []
        self._returns: list[ast.Return] = []
        self._named: list[ast.Assign] = []  # ``name = …``: what factories return and instances are built from

    def read(self, body: list[ast.stmt]) -> None:
        """Every statement of ``body``, in the order of :func:`nested_statements` (the checks that pass over
        most statements are written out here: a call per statement and fact is what this pass saves)."""
        method = self.method
        pending = body[::-1]
        while pending:
            stmt = pending.pop()
            kind = type(stmt)
            if kind is ast.Assign:
                assign = cast(ast.Assign, stmt)
                value = assign.value
                if type(value) is ast.Call and type(func := value.func) is ast.Attribute and func.attr == method:
                    self._call_up(value)
                targets = assign.targets
                target = targets[0]
                if len(targets) == 1 and type(target) is ast.Name:
                    self._named.append(assign)
                    self._local(target.id, value)
                    continue  # it sets no attribute of ``self``
                if len(targets) == 1 and type(target) is ast.Attribute and self._architectures_named:
                    self._architecture_attribute(target, value)
                if any(map(_sets_self, targets)):
                    self.assigned.append(assign)
            elif kind is ast.Expr or kind is ast.Return:
                value = cast(ast.Expr, stmt).value
                if value is None:
                    continue
                if type(value) is ast.Call and type(func := value.func) is ast.Attribute and func.attr == method:
                    self._call_up(value)
                self._forward(value)
                if kind is ast.Return:
                    self._returns.append(cast(ast.Return, stmt))
            elif kind is ast.AnnAssign:
                if _sets_self(cast(ast.AnnAssign, stmt).target):
                    self.assigned.append(cast(ast.AnnAssign, stmt))
            elif kind is ast.If or kind is ast.For or kind is ast.While or kind is ast.AsyncFor:
                pending.extend(reversed(cast(ast.If, stmt).body + cast(ast.If, stmt).orelse))
            elif kind is ast.With or kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.AsyncWith:
                if kind is ast.With:
                    self.withs.append(stmt)
                pending.extend(reversed(cast(ast.With, stmt).body))
            elif kind in _COMPOUND and kind is not ast.ClassDef:  # ``try`` and ``match``
                pending.extend(reversed(blocks_of(stmt)))

    def _local(self, name: str, value: ast.expr) -> None:
        """What a local name called as a constructor may stand for, inside one method.

        ``language_model_cls=Qwen3LLMModel`` (a parameter default) stands for that class;
        ``language_model_cls = self._get_sgl_model_cls(config)`` (a name computed by a call) stands for whatever
        the model registry returns, :data:`REGISTRY`; ``instance_class = _SUPPORT_VERSION.get(version)`` (a
        lookup in a module-level name) stands for the values of that dict, ``("_SUPPORT_VERSION", "{}")``, which
        resolution finds in the module's ``class_maps``.
        """
        if self._architectures_named:
            self._architecture_local(name, value)
        out = self.local_classes
        if type(value) is not ast.Call and type(value) is not ast.Subscript:  # neither looks a class up
            named = _named_classes(value, out)
            if named:  # ``body_cls = Qwen2Model`` (or ``A if cond else B``), then ``self.model = body_cls(...)``
                out.setdefault(name, []).extend(c for c in named if c not in out.get(name, ()))
            return
        looked_up = _dict_lookup(value)
        if looked_up is not None:
            out.setdefault(name, []).append((looked_up, "{}"))
            return
        if type(value) is ast.Subscript:
            value = value.value  # ``ModelRegistry.resolve_model_cls(arch)[0]``
        if type(value) is ast.Call:
            callee = chain_of(value.func)
            # no match spans a dot, so the joined chain matches where one of its parts does
            if callee is not None and _REGISTRY_LOOKUP.search(".".join(callee)):
                out.setdefault(name, []).append(REGISTRY)

    def _architecture_local(self, name: str, value: ast.expr) -> None:
        """Locals of one method that pin architecture names down: ``architectures = ["Glm4ForCausalLM"]`` in
        each branch of a test (key ``"[architectures]"``), ``vllm_config = vllm_config.with_hf_config(config,
        architectures=[...])`` (key ``vllm_config``); each key → the names of every such assignment. A branch
        that leaves it to the HF config (``architectures = None``) adds nothing: the named candidates are still
        ones a run may build."""
        literal = _literal_names(value)
        key, names = (f"[{name}]", literal) if literal is not None else (
            name, _named_architectures(value, self.architectures) if type(value) is ast.Call else None)
        if names is not None:
            known = self.architectures.setdefault(key, [])
            known += [n for n in names if n not in known]

    def _architecture_attribute(self, target: ast.Attribute, value: ast.expr) -> None:
        """``config.text_config.architectures = ["MistralForCausalLM"]`` (vLLM's Llava for Pixtral-12B): the
        config handed on as ``hf_config=config.text_config`` names it (key ``config.text_config``)."""
        if target.attr == "architectures" and chain_of(target.value):
            names = _literal_names(value)
            known = self.architectures.setdefault(".".join(chain_of(target.value) or ()), []) if names else []
            known += [n for n in names or () if n not in known]

    def _call_up(self, call: ast.Call) -> None:
        """A call of the same method of a base (see ``ClassSummary.calls_up``: where each goes), and the
        classes it passes there by keyword (``super().__init__(config, language_model_cls=Qwen3MoeLLMModel)``:
        for instances of this class that parameter is that class, as if this method had it as its default).
        ``call`` calls an attribute named as the method."""
        owner = cast(ast.Attribute, call.func).value
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
            past = chain_of(owner.args[0]) if owner.args else None
            self.up.append((*past, "super") if past is not None else ())
        elif call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == "self" \
                and (named := _class_chain(owner)) is not None and named[0] != "self":
            self.up.append(named)
        else:
            return
        for keyword in call.keywords:
            chain = _class_chain(keyword.value) if keyword.arg is not None else None
            if keyword.arg is not None and chain is not None and chain[0] != "self":
                self.passed_up.append((self.method, keyword.arg, chain))

    def _forward(self, value: ast.expr) -> None:
        """The attribute paths a method hands its own member to: a returned or bare ``self.<path>.<member>(...)``
        or, for a property, a returned ``self.<path>.<member>`` (under a guard too:
        ``if hasattr(self.model, "m"): return self.model.m()``)."""
        if type(value) is ast.Await:
            value = value.value
        if type(value) is ast.Call:
            value = value.func
        if type(value) is not ast.Attribute or value.attr != self.method:
            return
        chain = chain_of(value)
        if chain is not None and len(chain) > 2 and chain[0] == "self" and "()" not in chain and "[]" not in chain:
            self.forwarded.append(".".join(chain[1:-1]))

    def local_instances(self) -> dict[str, list[Chain]]:
        """Locals assigned an instance (``minicpmv = instance_class(config=config)``): the classes it may be,
        for a later ``self.minicpmv = minicpmv``."""
        out: dict[str, list[Chain]] = {}
        for stmt in self._named:
            for call in _possible_calls(stmt.value):
                callee = chain_of(call.func)
                if callee is not None and "()" not in callee and "[]" not in callee:
                    chains = self.local_classes.get(callee[0], [callee]) if len(callee) == 1 else [callee]
                    out.setdefault(cast(ast.Name, stmt.targets[0]).id, []).extend(chains)
        return out

    def returned_constructors(self) -> tuple[Chain, ...]:
        """Classes a factory method returns instances of: ``return Qwen2ForCausalLM(...)``, a local built so,
        a local class called (``model_cls = LlamaModel; return model_cls(...)``, a class default, or
        ``instance_cls = _SUPPORT_VERSION.get(key)`` then ``return instance_cls(...)``, as a dispatcher's
        ``__new__`` does: what that name stands for) or a class attribute or another factory of the class
        (``return self.model_cls(...)``, kept as ``("self", name)``)."""
        if not self._returns:
            return ()
        names = {sub.value.id for sub in self._returns if isinstance(sub.value, ast.Name)}
        built: dict[str, list[ast.Call]] = {}  # the calls each returned local may come from
        for stmt in self._named if names else ():
            if (name := cast(ast.Name, stmt.targets[0]).id) in names:
                built.setdefault(name, []).extend(_possible_calls(stmt.value))
        returned: list[Chain] = []
        for sub in self._returns:
            calls = built.get(sub.value.id, []) if isinstance(sub.value, ast.Name) else _possible_calls(sub.value)
            for call in calls:
                chain = chain_of(call.func)
                if chain is not None and len(chain) == 1 and chain[0] in self.local_classes:
                    returned += [c for c in self.local_classes[chain[0]] if c != REGISTRY]
                elif chain is not None and "()" not in chain and "[]" not in chain and (
                        chain[-1][:1].isupper() and chain[0] != "self" or len(chain) == 2 and chain[0] == "self"):
                    returned.append(chain)  # a class being instantiated (by naming convention), or self's factory
        return tuple(dict.fromkeys(returned))


def _sets_self(target: ast.expr) -> bool:
    """Whether an assignment target sets an attribute of ``self`` (``self.x``, or in a tuple of targets)."""
    if type(target) is ast.Tuple or type(target) is ast.List:
        return any(map(_sets_self, cast(ast.Tuple, target).elts))
    return type(target) is ast.Attribute and type(value := target.value) is ast.Name \
        and value.id == "self"


def _marked_language_attrs(statements: list[ast.stmt]) -> list[str]:
    """``self.<attr>`` assigned inside ``with self._mark_language_model(...)`` blocks of a method body (all of
    its statements, nested ones included: ``nested_statements`` of it)."""
    found = []
    for stmt in statements:
        if isinstance(stmt, ast.With) and any(
                isinstance(item.context_expr, ast.Call)
                and (chain_of(item.context_expr.func) or ("",))[-1] == "_mark_language_model" for item in stmt.items):
            for sub in nested_statements(stmt.body):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] \
                    if isinstance(sub, ast.AnnAssign) else []
                found += [t.attr for t in targets if isinstance(t, ast.Attribute) and chain_of(t.value) == ("self",)]
    return found


def _names_in_target(target: ast.expr) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _names_in_target(elt)]
    return []


_REGISTERED_INIT = re.compile(r"registered_model", re.IGNORECASE)
_NOT_A_CLASS = frozenset({"Any", "Optional", "Union", "None"})
# Calls that look a model class up (``_get_sgl_model_cls``, ``ModelRegistry.resolve_model_cls``), as opposed
# to other computed callables (``partial(nn.LayerNorm, …)``, a backend's own ``get_arch``).
_REGISTRY_LOOKUP = re.compile(r"model_?(?:cls|class)|resolve_model|registry", re.IGNORECASE)


def _config_annotation(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Chain | None:
    """The class ``__init__``'s ``config`` parameter is annotated with (``Optional[X]`` and ``"X"`` too)."""
    for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
        if arg.arg == "config" and arg.annotation is not None:
            annotation = arg.annotation
            if isinstance(annotation, ast.Subscript) and (chain_of(annotation.value) or ("",))[-1] == "Optional":
                annotation = annotation.slice
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                return tuple(annotation.value.split(".")) if all(
                    part.isidentifier() for part in annotation.value.split(".")) else None
            chain = chain_of(annotation)
            return chain if chain is not None and "()" not in chain and "[]" not in chain else None
    return None


def _class_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Chain]:
    """Parameters whose default is a class (``language_model_cls=Qwen3LLMModel``): name → the class."""
    out: dict[str, Chain] = {}
    if not node.args.defaults and not node.args.kwonlyargs:
        return out  # most methods: no default to read
    positional = node.args.posonlyargs + node.args.args
    defaults = list(zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults))
    defaults += [(a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
    for arg, default in defaults:
        chain = chain_of(default)
        if chain is not None and "()" not in chain and "[]" not in chain and chain[-1][:1].isupper():
            out[arg.arg] = chain
    return out


def _class_chain(node: ast.expr) -> Chain | None:
    """``X`` or ``mod.X`` (a capitalised name, as classes are written), or ``self.<attr>`` (a class attribute
    such as ``model_cls`` or a factory method, which resolution looks up along the checked class's MRO)."""
    chain = chain_of(node)
    if chain is None or "()" in chain or "[]" in chain:
        return None
    if chain[0] == "self":
        return chain if len(chain) == 2 else None
    return chain if chain[-1][:1].isupper() and chain[-1] not in _NOT_A_CLASS else None


def _named_classes(value: ast.expr, known: dict[str, list[Chain]]) -> list[Chain]:
    """The classes a value names without calling them: ``Qwen2Model``, ``A if cond else B``, ``given or A``,
    another local that stands for classes (``known``). ``None`` branches name nothing."""
    found: list[Chain] = []
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.IfExp):
            pending += (node.orelse, node.body)
        elif isinstance(node, ast.BoolOp):
            pending += reversed(node.values)
        elif isinstance(node, ast.Name) and node.id in known:
            found += known[node.id]
        elif not (isinstance(node, ast.Constant) and node.value is None):
            chain = _class_chain(node)
            if chain is None:
                return []  # anything else computed: not a plain choice among classes
            found.append(chain)
    return found


def _tests_for(method: ast.FunctionDef | ast.AsyncFunctionDef, path: str, member: str, lines: Lines) -> bool:
    """Whether the method asks ``hasattr(self.<path>, "<member>")`` or ``getattr(self.<path>, "<member>", …)``
    anywhere, or catches ``AttributeError``: a forward it guards so raises its own error, or none, when the inner
    lacks the member. Walked only for the few methods that forward their own member, and of those only the ones
    whose text spells a word such a test needs (an ASCII text's names are as written): most spell none."""
    text = "\n".join(lines.lines[method.lineno - 1:method.end_lineno])
    if text.isascii() and not any(word in text for word in _TESTING_WORDS):
        return False
    holder = ("self", *path.split("."))
    for node in ast.walk(method):
        if isinstance(node, ast.Try) and any(_catches_attribute_error(h) for h in node.handlers):
            return True  # ``except AttributeError`` (or broader) around it: it does not crash the run there
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr") \
                and len(node.args) >= 2 and chain_of(node.args[0]) == holder \
                and isinstance(node.args[1], ast.Constant) and node.args[1].value == member:
            return True
    return False


_TESTING_WORDS = ("hasattr", "getattr", "except")  # what a method's text spells if it tests for a member


def _catches_attribute_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(c is None or isinstance(c, ast.Name) and c.id in ("AttributeError", "Exception", "BaseException")
               for c in caught)


def _dict_lookup(value: ast.expr) -> str | None:
    """``NAME[key]`` or ``NAME.get(key)`` of a module-level constant (a capitalised name): the name."""
    if isinstance(value, ast.Subscript):
        holder = value.value
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get":
        holder = value.func.value
    else:
        return None
    return holder.id if isinstance(holder, ast.Name) and holder.id.lstrip("_")[:1].isupper() else None


def _collect_self_assignment(node: ast.AST, lines: Lines, attrs: dict[str, Member], delegates: list[Delegate],
                             local_classes: dict[str, list[Chain]], instances: dict[str, list[Chain]],
                             method: tuple[str, dict[str, Chain]], architectures: dict[str, list[str]]) -> None:
    value: ast.expr | None
    if type(node) is ast.Assign:
        targets, value = node.targets, node.value
    elif type(node) is ast.AnnAssign:
        targets, value = [node.target], node.value
    else:
        return
    for target in targets:
        for sub in (target.elts if type(target) is ast.Tuple or type(target) is ast.List else [target]):
            if type(sub) is ast.Attribute and type(sub.value) is ast.Name and sub.value.id == "self":
                span = lines.attr_span(sub)
                if sub.attr not in attrs:  # the first assignment names it
                    attrs[sub.attr] = _member(sub.attr, "instance_attribute", span)
                if sub is target:
                    if type(node) is ast.AnnAssign and value is not None:  # ``self.lm: Qwen2ForCausalLM = …``
                        delegates.extend(_delegate(sub.attr, chain, span, method=method[0])
                                         for chain in _annotated_classes(node.annotation))
                    if type(value) is ast.Name and value.id in instances:
                        delegates.extend(_delegate(sub.attr, chain, span, method=method[0]) for chain in instances[value.id])
                    for call in _possible_calls(value):
                        callee = chain_of(call.func)
                        if callee is None or "()" in callee or "[]" in callee:
                            continue
                        if _REGISTERED_INIT.search(callee[-1]):
                            delegates.extend(_delegate(sub.attr, chain, span, method=method[0])
                                             for chain in _architectures(call, architectures))
                            continue
                        named = _model_class_argument(call, callee, local_classes)
                        if named is not None:
                            delegates.extend(_delegate(sub.attr, chain, span, method=method[0]) for chain in named)
                            continue
                        via = (method[0], callee[0]) if len(callee) == 1 and callee[0] in method[1] else None
                        for chain in local_classes.get(callee[0], [callee]) if len(callee) == 1 else [callee]:
                            delegates.append(_delegate(sub.attr, chain, span, via if chain == method[1].get(callee[0]) else None,
                                                      method[0]))


def _member(name: str, kind: str, span: Span, min_args: int = 0, max_args: int | None = None) -> Member:
    """``Member(name, kind, span, min_args, max_args)``, made without the frozen ``__init__`` (one
    ``object.__setattr__`` per field): a model file's classes make members by the thousand. ``Member`` has no
    ``__post_init__`` and no field outside ``__init__``."""
    member = _NEW(Member)
    member.__dict__.update(name=name, kind=kind, span=span, min_args=min_args, max_args=max_args)
    return member


def _delegate(attr: str, callee: Chain, span: Span, via: tuple[str, str] | None = None, method: str = "") -> Delegate:
    """``Delegate(attr, callee, span, via, method)``, made as :func:`_member` makes a member (``Delegate`` has no
    ``__post_init__`` and no field outside ``__init__`` either)."""
    delegate = _NEW(Delegate)
    delegate.__dict__.update(attr=attr, callee=callee, span=span, via=via, method=method)
    return delegate


_NEW = object.__new__


def _model_class_argument(call: ast.Call, callee: Chain, local_classes: dict[str, list[Chain]]) -> list[Chain] | None:
    """What a model-building helper builds when the call names the class itself
    (``initialize_model(vllm_config=…, model_class=Llama4ForCausalLM)``): that class, or what a local name
    passed there stands for. ``initialize_model`` without it picks the class from the HF config at run time:
    ``(ARCHITECTURE,)``, unknown. Any other call: None (its callee is the class)."""
    for keyword in call.keywords:
        if keyword.arg in ("model_class", "model_cls"):
            chain = chain_of(keyword.value)
            if chain is None or "()" in chain or "[]" in chain:
                return [(ARCHITECTURE,)]
            return local_classes.get(chain[0], [chain]) if len(chain) == 1 else [chain]
    return [(ARCHITECTURE,)] if callee[-1] == "initialize_model" else None


def _literal_names(value: ast.expr) -> list[str] | None:
    """``["Qwen2ForCausalLM"]``: the names of a literal list (or tuple) of strings, else None."""
    if isinstance(value, (ast.List, ast.Tuple)) and value.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
        return [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def _named_architectures(value: ast.expr, known: dict[str, list[str]]) -> list[str] | None:
    """The architecture names a call pins down: those given as ``architectures=`` (a literal list, or a local
    bound to one) to it or to a call among its arguments at any depth (``vllm_config.with_hf_config(
    text_config, architectures=["Qwen2ForCausalLM"])``), or carried by a local bound to such a call.
    ``known`` holds the locals, keyed ``"[name]"`` for lists and ``name`` for calls, so a list passed as any
    other argument never counts. None: the HF config names it at run time."""
    if isinstance(value, (ast.Name, ast.Attribute)):  # a config the method named the architectures of
        chain = chain_of(value)
        return known.get(".".join(chain)) if chain else None
    if not isinstance(value, ast.Call):
        return None
    for keyword in value.keywords:
        if keyword.arg == "architectures":
            given = keyword.value
            return _literal_names(given) or (known.get(f"[{given.id}]") if isinstance(given, ast.Name) else None)
    for argument in [*value.args, *(k.value for k in value.keywords if k.arg is not None)]:
        found = _named_architectures(argument, known)
        if found is not None:
            return found
    return None


def _architectures(call: ast.Call, known: dict[str, list[str]]) -> list[Chain]:
    """What a registry-building call (``init_vllm_registered_model``) builds: one ``(ARCHITECTURE, name)`` per
    architecture name it is given (see :func:`_named_architectures`), else ``(ARCHITECTURE,)``: the HF config
    names it at run time."""
    names = _named_architectures(call, known)
    return [(ARCHITECTURE, name) for name in names] if names else [(ARCHITECTURE,)]


def _annotated_classes(annotation: ast.expr) -> list[Chain]:
    """The classes an attribute annotation names: ``X``, ``mod.X``, ``"X"``, ``X | None``, ``Optional[X]``."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return []
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _annotated_classes(annotation.left) + _annotated_classes(annotation.right)
    if isinstance(annotation, ast.Subscript) and (chain_of(annotation.value) or ("",))[-1] == "Optional":
        return _annotated_classes(annotation.slice)
    chain = chain_of(annotation)
    if chain is None or "()" in chain or "[]" in chain or not chain[-1][:1].isupper() or chain[-1] in _NOT_A_CLASS:
        return []
    return [chain]


def _possible_calls(value: ast.expr | None) -> list[ast.Call]:
    """The constructor calls an assigned value may come from: ``A(c) if cond else B(c)``, ``x or A(c)``.

    Walked with a stack, not recursion: a generated 2,500-deep conditional must not end the file's summary."""
    calls: list[ast.Call] = []
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, ast.IfExp):
            pending += (node.orelse, node.body)
        elif isinstance(node, ast.BoolOp):
            pending += reversed(node.values)
    return calls


_COMPOUND = frozenset(getattr(ast, name) for name in (
    "If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar", "FunctionDef", "AsyncFunctionDef",
    "ClassDef", "Match") if hasattr(ast, name))  # statements with blocks inside (node types are never subclassed)


def nested_statements(body: list[ast.stmt], into_classes: bool = False) -> list[ast.stmt]:
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
        pending.extend(reversed(blocks_of(stmt)))
    return out


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
