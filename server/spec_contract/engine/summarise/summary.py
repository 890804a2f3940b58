"""Per-file summaries: everything later stages need from one file, as plain picklable data.

A summary depends only on the file's text (and on whether the file is a worker, which adds the flow
records), so it is cached by content hash and rebuilt only when that file changes. Names stay unresolved
here: a base class is kept as the dotted chain written in the source (``nn.Module``, ``DeepseekV3ForCausalLM``)
and resolution across modules happens in :mod:`spec_contract.engine.resolve.index`.

Chains are tuples of segments: names, ``"[]"`` for a subscript and ``"()"`` for a call, so
``self.draft_runner_list[i].model`` is ``("self", "draft_runner_list", "[]", "model")``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

from spec_contract.engine.results import Span

Chain = tuple[str, ...]
# the alias target standing for a function's return value (a keyword, so never a name's chain)
RETURNED: Chain = ("return",)
REGISTRY = ("<registry>",)  # a delegate callee whose class the engine's model registry picks at run time
# A delegate built by the engine's registry from an architecture name: ``(ARCHITECTURE, "Qwen2ForCausalLM")``
# for ``init_vllm_registered_model(..., architectures=["Qwen2ForCausalLM"])`` (resolved through the profile's
# ``registry-files``), ``(ARCHITECTURE,)`` when the name comes from the HF config at run time (unknown)
ARCHITECTURE = "<architecture>"
NEVER_TRUE = "!"  # the member of a state given a falsy constant (see ``FunctionFlow.states``)


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
    method: str = ""  # the method that assigns it: a subclass overriding it without calling up never runs it


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
    # (method, where it calls up): the methods whose body calls the same method of a base, ``super().m(...)``
    # (``()``: the next class of the MRO), ``super(X, self).m(...)`` (``(X...)`` + ``("super",)``: past X) or
    # ``X.m(self, ...)`` (``X`` itself): a base's method that no override calls up to never runs
    calls_up: tuple[tuple[str, Chain], ...] = ()
    # (member, attribute path): the class's own methods and properties that hand the same member to an
    # inner object, ``return self.model.get_input_embeddings()`` → ("get_input_embeddings", "model"): a
    # run that uses the member here needs it there
    forwards: tuple[tuple[str, str], ...] = ()
    # those of ``forwards`` whose method never tests the inner object for the member first (no
    # ``hasattr(self.<path>, "m")`` or ``getattr(self.<path>, "m", …)``): when the inner's class lacks it, a
    # run that uses the member here dies inside this forward
    unguarded_forwards: tuple[tuple[str, str], ...] = ()
    # methods whose body the skeleton of a deferred statement left unparsed though it returns something: their
    # factories are read when asked for (see ``deferred.factory``), in place among ``factories``
    unread: tuple[UnreadMethod, ...] = ()


class UnreadMethod(NamedTuple):
    """A method of a class whose body was not parsed (see :mod:`~spec_contract.engine.summarise.skeleton`)."""

    name: str
    position: int  # how many of the class's ``factories`` come before it
    lines: tuple[int, int]  # its first (a decorator's) and last line, 1-based


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
    # ``v = getattr(m, "x", None)`` and later ``other.x = v``: the optional read's value becomes another model
    # object's ``x`` (the loader shares the target's ``lm_head`` with the draft it loads), see CallSite
    shared: bool = False
    statement: bool = False  # a call that is a statement of its own: its value unused, made for its effect
    # the formulas of the enclosing tests that may select an algorithm, each true here (see ``selectors``)
    selects: tuple = ()
    # (receiver as dotted text, member) the enclosing tests hold present (``if hasattr(m, "a"):``, past ``if not
    # hasattr(m, "a"): return``): a use of another member of the same model here meets only models with those
    # (see ``CallSite.requires``)
    vouched: frozenset[tuple[str, str]] = frozenset()
    # ``alternative_of`` of the object holding the receiver (``m`` of ``m.model.y``): when the use is of a member of
    # the model's own inner model, the members whose absence on the model leads here
    above: tuple[str, ...] = ()

@dataclass(frozen=True)
class CallFlow:
    """A call to something that may be a workspace function: how argument values flow into it."""

    callee: Chain
    args: tuple[Chain | None, ...]
    kwargs: tuple[tuple[str, Chain], ...]
    taken: frozenset[str] = frozenset()  # names of the enclosing tests whose true branch the call is in
    selects: tuple = ()  # the formulas of the enclosing tests that may select an algorithm (see ``selectors``)
    vouched: frozenset[tuple[str, str]] = frozenset()  # what the enclosing tests hold present (see ``Use.vouched``)


@dataclass(frozen=True)
class FunctionFlow:
    """One function's aliasing facts and uses, for the contract's fixed-point flow."""

    qualname: str  # "EAGLEWorker.__init__" or "helper"
    class_name: str | None
    params: tuple[str, ...]  # positional parameter names, ``self`` included for methods
    kwonly: tuple[str, ...]  # keyword-only parameter names
    # target chain (("x",) or ("self", "x")) ← value chain; ``RETURNED`` ← a name the function returns; a method
    # that returns a part of its instance gives ``("self", "<name>()")`` (a property ``("self", "<name>")``) ← it
    aliases: tuple[tuple[Chain, Chain], ...]
    calls: tuple[CallFlow, ...]
    uses: tuple[Use, ...]
    # how it routes draft models to drafters by their class (see ``summarise.routes``): (kind, classes, drafter,
    # algorithms)
    routes: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = ()
    # (name, value, selects): a name, attribute or keyword argument given a value that may be true (``True``:
    # ``("&",)``; a test's formula; None: any other value) under the tests ``selects``: where a flag such as
    # ``dflash_use_aux_hidden_state`` can be set, so which algorithms' runs have it (see ``resolve.algorithms``)
    flags: tuple[tuple[str, tuple | None, tuple], ...] = ()
    # (class name as written, selects): classes it builds (``Proposer(...)``) or returns (``return Worker``)
    # under those tests: which algorithms' runs make a worker class
    builds: tuple[tuple[Chain, tuple], ...] = ()
    returns: tuple | None = None  # a predicate's formula: the body is one ``return <test>``
    # (attribute, member, object) for each ``self.<attribute> = <value>`` it makes: member is the one a test made
    # before it asks the object (as dotted text) for (``self._local = hasattr(self.model, "m")``, or under ``if
    # hasattr(self.model, "m"):``), ``"()" + callee`` for what a called function's own test holds (the value's
    # callee, or the method of ``if self._supports_local():`` around it), else the member the value reads
    # (``self._local = self.model.m``), "" for a value nothing stands behind, ``NEVER_TRUE`` for a falsy constant
    # (``self._local = None``: no test of it is true after it; see ``engine.state_guards``)
    states: tuple[tuple[str, str, str], ...] = ()
    # (object, member) a test at the top of the body holds for every value but a false one it returns (``if not
    # isinstance(target_model, P): return False``: member "*", any; ``if not hasattr(m, "x"): return None``): a state
    # set from a call's value (member ``"()" + callee`` in ``states``) stands behind that test of the argument, or of
    # the instance's own attribute (object ``self.model``) when the call is on ``self``
    vouches: tuple[tuple[str, str], ...] = ()
    # (word, member, object) for each check that raises unless the object has the member wherever the word holds
    # true (``if self.use_local and not hasattr(self.model, "m"): raise``, or ``if not hasattr(…): raise`` past
    # ``if not self.use_local: return``): past it, a true ``use_local`` means the object has ``m`` (see
    # ``engine.state_guards``: a start-up validation of a flag guards the flag's later tests)
    validates: tuple[tuple[str, str, str], ...] = ()


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
    imports: tuple[ImportBinding, ...]  # module-level ones (see ``deferred.local_import`` for the others)
    classes: tuple[ClassSummary, ...]  # the parsed ones; see ``deferred.all_classes`` for every class
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
    # (class as written, the test that picks it) for each worker class a worker file registers under an algorithm's
    # name at module level (``{"dspark": DSparkSpeculator}``, ``@register("mtp")``): see ``summarise.registries``
    registrations: tuple[tuple[Chain, tuple], ...] = ()
    # deferred index → what its statement held, filled by :mod:`~spec_contract.engine.summarise.deferred` as the
    # analysis asks for its classes (the scanner fills it for the registered ones; a cache hit keeps it)
    parsed: dict[int, ParsedClass] = field(default_factory=dict, init=False, compare=False, repr=False)

    def moved(self, path: str, module: str) -> ModuleSummary:
        """This summary for another file of the same text (a cache hit), with the classes parsed so far."""
        copy = replace(self, path=path, module=module)
        copy.parsed.update(self.parsed)
        return copy

    def has_class(self, name: str) -> bool:
        """Whether the module defines a top-level class ``name`` (without parsing a deferred one)."""
        return any(c.qualname == name for c in self.classes) or any(d.name == name for d in self.deferred)

    def deferred_error(self) -> str | None:
        """The syntax error of a deferred class statement that was asked for, if one did not parse."""
        return next((parsed.error for parsed in self.parsed.values() if parsed.error), None)
