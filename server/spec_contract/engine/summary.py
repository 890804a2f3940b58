"""Per-file summaries: everything later stages need from one file, as plain picklable data.

A summary depends only on the file's text (and on whether the file is a worker, which adds the flow
records), so it is cached by content hash and rebuilt only when that file changes. Names stay unresolved
here: a base class is kept as the dotted chain written in the source (``nn.Module``, ``DeepseekV3ForCausalLM``)
and resolution across modules happens in :mod:`spec_contract.engine.resolve`.

Chains are tuples of segments: names, ``"[]"`` for a subscript and ``"()"`` for a call, so
``self.draft_runner_list[i].model`` is ``("self", "draft_runner_list", "[]", "model")``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from spec_contract.engine.results import Span

Chain = tuple[str, ...]


@dataclass(frozen=True)
class ImportBinding:
    """``import a.b as c`` → (c, "a.b", None, 0); ``from ..x import y as z`` → (z, "x", "y", 2)."""

    name: str
    module: str
    member: str | None
    level: int


@dataclass(frozen=True)
class Member:
    """Something a class provides under a name."""

    name: str
    kind: str  # "method", "async_method", "property", "class_attribute", "instance_attribute"
    span: Span  # the name
    min_args: int = 0  # positional arguments a call must pass (methods; self excluded)
    max_args: int | None = None  # None when *args is accepted


@dataclass(frozen=True)
class Delegate:
    """``self.<attr> = <callee>(...)``: a candidate inner object of a wrapper."""

    attr: str
    callee: Chain  # the called name as written, e.g. ("DeepseekV3ForCausalLM",)
    span: Span
    # (method, parameter) when the class is that parameter's default (``language_model_cls=Qwen3LLMModel``):
    # a subclass whose same method has its own default for the parameter passes that one instead
    via: tuple[str, str] | None = None


@dataclass(frozen=True)
class ClassSummary:
    name: str
    qualname: str  # dotted within the module for nested classes
    span: Span  # the class name
    bases: tuple[Chain, ...]
    members: tuple[Member, ...]
    delegates: tuple[Delegate, ...]
    getattr_forward: str | None  # "" when ``__getattr__`` forwards to something unknown, attr name if known
    factories: tuple[tuple[str, tuple[Chain, ...]], ...]  # method → classes it returns instances of (``init_llm``)
    suppressed: frozenset[str]  # codes from ``# spec-contract: ignore[...]``; "*" for a bare ignore
    param_defaults: tuple[tuple[str, str, Chain], ...] = ()  # (method, parameter, class default as written)
    config: Chain | None = None  # the annotation of ``__init__``'s ``config`` parameter (``KimiK25Config``)
    # attributes assigned inside ``with self._mark_language_model(...)``: the engine's own record of which
    # attribute holds the language model (vLLM's ``get_language_model()`` returns it)
    language_attrs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Use:
    """``<receiver>.<member>`` read or called inside a worker function."""

    receiver: Chain
    member: str
    span: Span  # the member name
    is_call: bool
    arity: int | None  # positional arguments passed, None with */** unpacking or for reads
    guarded: bool
    conditions: frozenset[str]  # names in enclosing ``if`` tests (speculative-only receivers, algorithms)
    text: str  # the source line, stripped
    # The members of a capability gate that this use sits behind on its receiver (``if not hasattr(m, "x"):
    # raise``, a hasattr chain ending in ``raise``, ``getattr(m, "x", None)`` then ``raise`` when None)
    gate: tuple[str, ...] = ()
    # Members whose absence on the same receiver leads here: the ``else`` of ``if hasattr(m, "a")``, the code
    # after ``if hasattr(m, "a"): return``, an ``except AttributeError`` around uses of ``m.a`` (a fallback)
    alternative_of: tuple[str, ...] = ()
    condition: str | None = None  # a rare condition the use sits under (env flag, model type), as written
    taken: frozenset[str] = frozenset()  # names of enclosing tests whose true branch this is (algorithms)
    gate_line: int | None = None  # 0-based line of the gate's test (the ``if not hasattr…``, the getattr)
    condition_classes: tuple[str, ...] = ()  # an ``isinstance`` condition's config classes (see CallSite)


@dataclass(frozen=True)
class CallFlow:
    """A call to something that may be a workspace function: how argument values flow into it."""

    callee: Chain
    args: tuple[Chain | None, ...]
    kwargs: tuple[tuple[str, Chain], ...]


@dataclass(frozen=True)
class FunctionFlow:
    """One function's aliasing facts and uses, for the contract's fixed-point flow."""

    qualname: str  # "EAGLEWorker.__init__" or "helper"
    class_name: str | None
    params: tuple[str, ...]  # positional parameter names, ``self`` included for methods
    kwonly: tuple[str, ...]  # keyword-only parameter names
    aliases: tuple[tuple[Chain, Chain], ...]  # target chain (("x",) or ("self", "x")) ← value chain
    calls: tuple[CallFlow, ...]
    uses: tuple[Use, ...]


@dataclass(frozen=True)
class DeferredClass:
    """A model file's top-level class statement, kept as text until the analysis asks for the class.

    Most classes of a model file (attention, MLP, decoder layers) are never a wrapper, a base or an inner
    model, and a model file imports many large modules for one class each: a cold run parses only the
    classes it looks up.
    """

    name: str
    first_line: int  # 0-based line where the statement starts
    text: str
    line_above: str  # where a suppression comment for the class may sit
    position: int  # how many of the summary's parsed classes come before it in the file
    # Every name an import statement inside it may bind (a superset, found without parsing): the statement
    # is parsed for a name only if the name is in here
    imported: frozenset[str] = frozenset()


class ParsedClass(NamedTuple):
    """What a deferred class statement held, once parsed: its classes and the imports inside its methods."""

    classes: tuple[ClassSummary, ...]
    local_imports: tuple[tuple[int, ImportBinding], ...]  # (line, binding), as ModuleSummary.local_imports
    error: str | None  # the statement's syntax error: then it holds nothing


@dataclass(frozen=True)
class ModuleSummary:
    path: str
    module: str
    digest: str
    imports: tuple[ImportBinding, ...]  # module-level ones (see ``local_import`` for the others)
    classes: tuple[ClassSummary, ...]  # the parsed ones; see ``all_classes`` for every class
    assignments: tuple[tuple[str, Chain], ...]  # module-level ``Name = other.Name`` aliases
    entry_classes: tuple[str, ...] | None  # names listed in the profile's entry-class variable
    functions: tuple[FunctionFlow, ...]  # only for worker files
    is_package: bool
    error: str | None = None  # a syntax error: the summary is empty and should not replace a good one
    deferred: tuple[DeferredClass, ...] = ()
    # (line, binding) of the imports inside the functions and classes parsed with the file, in file order
    local_imports: tuple[tuple[int, ImportBinding], ...] = ()
    # module-level dicts whose values are classes (``_SUPPORT_VERSION = {(2, 6): MiniCPMV2_6, …}``): name →
    # the values as written, for an inner chosen by a lookup in one (``instance_class = _SUPPORT_VERSION[v]``)
    class_maps: tuple[tuple[str, tuple[Chain, ...]], ...] = ()
    # deferred index → what its statement held; filled as classes are asked for
    _parsed: dict[int, ParsedClass] = field(
        default_factory=dict, init=False, compare=False, repr=False)

    def moved(self, path: str, module: str) -> ModuleSummary:
        """This summary for another file of the same text (a cache hit), with the classes parsed so far."""
        copy = replace(self, path=path, module=module)
        copy._parsed.update(self._parsed)
        return copy

    def has_class(self, name: str) -> bool:
        """Whether the module defines a top-level class ``name`` (without parsing a deferred one)."""
        return any(c.qualname == name for c in self.classes) or any(d.name == name for d in self.deferred)

    def find_class(self, qualname: str) -> ClassSummary | None:
        """The class of that dotted name the module ends up with, parsing its statement if it was deferred.

        A name bound twice is the last definition at run time (a second ``class A`` replaces the first), so
        the last top-level ``class`` of that name is the one checked, and a nested name is looked up in it.
        """
        top = qualname.partition(".")[0]
        found = None
        for cls in self._in_order(lambda d: d.name == top):
            if cls.qualname == top:
                found = None  # a later definition of the outer class: what the earlier one held is gone
            if cls.qualname == qualname:
                found = cls
        return found

    def all_classes(self, mentioning: str | None = None) -> list[ClassSummary]:
        """Every class in file order; with ``mentioning``, deferred ones whose text lacks it are left out."""
        return list(self._in_order(lambda d: mentioning is None or mentioning in d.text))

    def top_level_classes(self, names: Iterable[str]) -> list[ClassSummary]:
        """The top-level classes of those names, in file order; of a name defined twice, the last definition
        (see :meth:`find_class`)."""
        wanted = set(names)
        last = {c.qualname: c for c in self._in_order(lambda d: d.name in wanted) if c.qualname in wanted}
        return sorted(last.values(), key=lambda c: (c.span.line, c.span.col))

    def local_import(self, name: str) -> ImportBinding | None:
        """The binding of ``name`` by an import inside a function or class, the last one in the file.

        Resolution looks here for names no module-level statement binds (``from .mistral import X`` inside
        a function of ``__init__``). Of the deferred class statements, only those that may import ``name``
        are parsed for it.
        """
        found = [(line, binding) for line, binding in self.local_imports if binding.name == name]
        for index, deferred in enumerate(self.deferred):
            if name in deferred.imported:
                self._complete(index)
                found += [(line, binding) for line, binding in self._parsed[index].local_imports
                          if binding.name == name]
        return sorted(found, key=lambda item: item[0])[-1][1] if found else None  # stable: the later of one line's

    def deferred_error(self) -> str | None:
        """The syntax error of a deferred class statement that was asked for, if one did not parse."""
        return next((parsed.error for parsed in self._parsed.values() if parsed.error), None)

    def _in_order(self, wanted: Callable[[DeferredClass], bool]) -> Iterator[ClassSummary]:
        deferred = iter(enumerate(self.deferred))
        pending = next(deferred, None)
        for position, cls in enumerate(self.classes):
            while pending is not None and pending[1].position <= position:
                if wanted(pending[1]):
                    yield from self._complete(pending[0])
                pending = next(deferred, None)
            yield cls
        while pending is not None:
            if wanted(pending[1]):
                yield from self._complete(pending[0])
            pending = next(deferred, None)

    def _complete(self, index: int) -> tuple[ClassSummary, ...]:
        if index not in self._parsed:
            from spec_contract.engine.scan import parse_deferred  # the scanner makes summaries: imported late

            self._parsed[index] = parse_deferred(self.deferred[index], self.path)
        return self._parsed[index].classes

