"""Per-file summaries: everything later stages need from one file, as plain picklable data.

A summary depends only on the file's text (and on whether the file is a worker, which adds the flow
records), so it is cached by content hash and rebuilt only when that file changes. Names stay unresolved
here: a base class is kept as the dotted chain written in the source (``nn.Module``, ``DeepseekV3ForCausalLM``)
and resolution across modules happens in :mod:`spec_contract.engine.resolve`.

Chains are tuples of segments: names, ``"[]"`` for a subscript and ``"()"`` for a call, so
``self.draft_runner_list[i].model`` is ``("self", "draft_runner_list", "[]", "model")``.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class ClassSummary:
    name: str
    qualname: str  # dotted within the module for nested classes
    span: Span  # the class name
    bases: tuple[Chain, ...]
    members: tuple[Member, ...]
    delegates: tuple[Delegate, ...]
    attr_aliases: tuple[tuple[str, str], ...]  # property ``model`` returning ``self.language_model``
    getattr_forward: str | None  # "" when ``__getattr__`` forwards to something unknown, attr name if known
    factories: tuple[tuple[str, tuple[Chain, ...]], ...]  # method → classes it returns instances of (``init_llm``)
    suppressed: frozenset[str]  # codes from ``# spec-contract: ignore[...]``; "*" for a bare ignore


@dataclass(frozen=True)
class Use:
    """``<receiver>.<member>`` read or called inside a worker function."""

    receiver: Chain
    member: str
    span: Span  # the member name
    is_call: bool
    arity: int | None  # positional arguments passed, None with */** unpacking or for reads
    guarded: bool
    conditions: frozenset[str]  # names in enclosing ``if`` tests (for speculative-only receivers)
    text: str  # the source line, stripped


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
class ModuleSummary:
    path: str
    module: str
    digest: str
    imports: tuple[ImportBinding, ...]
    classes: tuple[ClassSummary, ...]
    assignments: tuple[tuple[str, Chain], ...]  # module-level ``Name = other.Name`` aliases
    entry_classes: tuple[str, ...] | None  # names listed in the profile's entry-class variable
    functions: tuple[FunctionFlow, ...]  # only for worker files
    is_package: bool
    error: str | None = None  # a syntax error: the summary is empty and should not replace a good one

    def find_class(self, qualname: str) -> ClassSummary | None:
        for cls in self.classes:
            if cls.qualname == qualname:
                return cls
        return None
