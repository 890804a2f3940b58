"""A wrapper's inner objects: for each ``self.<attr> = <callee>(...)`` along its MRO, the classes it may hold.

The callee may be a class, a factory method (the most-derived one of the checked class), a parameter's
class default, a lookup in a module-level dict of classes, or the engine's model registry (the profile's
candidates, or an architecture name the registry maps to a class).
"""

from __future__ import annotations

import weakref

from spec_contract.engine.resolve.keys import MAX_DEPTH, ClassKey, ClassReader
from spec_contract.engine.resolve.platforms import same_branch
from spec_contract.engine.resolve.recording import Recorder
from spec_contract.engine.summarise.deferred import factory
from spec_contract.engine.summarise.summary import ARCHITECTURE, REGISTRY, Chain, ClassSummary, Delegate


class Delegates:
    """attribute → candidate inner classes, per class, read through the index (``reader``) and memoised."""

    def __init__(self, reader: ClassReader, recorder: Recorder, registry: tuple[str, ...],
                 architectures: dict[str, tuple[str, str]]) -> None:
        # The index owns this and is asked back weakly: holding each other, the two would be a reference cycle,
        # and an analysis's index, frozen with it (``pipeline._collector_paused``), would never be freed
        self._reader = weakref.proxy(reader)
        self._recorder = weakref.proxy(recorder)
        self._registry = registry  # dotted classes the engine's model registry may hand a wrapper
        self._architectures = architectures  # architecture name → (module, class), see ``engine.registry``
        self._delegates: dict[ClassKey, tuple[dict[str, tuple[ClassKey, ...]], frozenset[str]]] = {}
        self._factories: dict[tuple[ClassKey, str], tuple[Chain, ...] | None] = {}  # those read late, see ``_made``

    def loaded_as(self, architecture: str) -> str:
        """The name of the class the engine's registry loads for ``architecture``; the architecture's own name
        where the registry does not say (SGLang's architectures are their classes' names)."""
        found = self._architectures.get(architecture)
        return found[1].rsplit(".", 1)[-1] if found is not None else architecture

    def of(self, key: ClassKey) -> dict[str, tuple[ClassKey, ...]]:
        """attribute → candidate inner classes, from ``self.<attr> = <Class>(...)`` anywhere in the MRO."""
        return self._recorder.memoised(self._delegates, key, self._compute, key)

    def _compute(self, key: ClassKey) -> dict[str, tuple[ClassKey, ...]]:
        out: dict[str, list[ClassKey]] = {}
        for owner in self._reader.mro(key):
            cls = self._reader.class_summary(owner)
            if cls is None:
                continue
            for delegate in cls.delegates:
                if not self.runs(key, owner, delegate.method):
                    continue
                source, chain = self._default_for(key, owner, delegate)
                for module, callee in self._constructed(key, source, chain):
                    inner = self._reader.resolve_class(module, callee)
                    if inner is not None and inner != key and inner not in out.setdefault(delegate.attr, []):
                        out[delegate.attr].append(inner)
        return {attr: tuple(classes) for attr, classes in out.items() if classes}

    def _constructed(self, key: ClassKey, owner: ClassKey, callee: Chain) -> list[tuple[str, Chain]]:
        """The class names a delegate's value is built from, as (module, chain) to resolve.

        ``self.llm = self.init_llm(...)`` calls the most-derived ``init_llm`` of the class being checked,
        so factory methods are looked up along ``key``'s MRO, not the assigning class's; a factory that
        returns ``self.model_cls(...)`` is followed to the most-derived ``model_cls`` the same way.
        """
        reader = self._reader
        if callee == REGISTRY:  # chosen at run time: the profile names the candidates
            return [(reader.engine_module(module), (name,))
                    for module, _, name in (c.rpartition(".") for c in self._registry)]
        if callee[0] == ARCHITECTURE:  # built by the registry from an architecture name (unknown: nothing)
            found = self._architectures.get(callee[1]) if len(callee) == 2 else None
            choices = reader.platform_choices(reader.engine_module(found[0]), found[1]) if found else ()
            return [(choice.module, (choice.qualname,)) for choice in same_branch(reader, choices, owner.module)]
        if callee[0] != "self":
            return self._expanded(owner.module, callee)
        if len(callee) != 2:
            return []
        return self._factory(key, callee[1])

    def _factory(self, key: ClassKey, method: str, depth: int = 0) -> list[tuple[str, Chain]]:
        """What the most-derived ``method`` along ``key``'s MRO returns instances of (its factories); one
        that builds another of the class's factories or class attributes (``return self.model_cls(...)``)
        builds what that one does, for ``key`` too."""
        for candidate in self._reader.mro(key):
            cls = self._reader.class_summary(candidate)
            made = self._made(candidate, cls, method) if cls is not None else None
            if made is not None:
                out = [found for chain in made if chain[0] != "self"
                       for found in self._expanded(candidate.module, chain)]
                if depth < MAX_DEPTH:
                    out += [found for chain in made if chain[0] == "self" and chain[1:] != (method,)
                            for found in self._factory(key, chain[1], depth + 1)]
                return out
        return []

    def _made(self, key: ClassKey, cls: ClassSummary, method: str) -> tuple[Chain, ...] | None:
        """What the class's own factory ``method`` returns instances of, None if it has none; a method whose
        body its statement's skeleton left out is read when first asked for (see ``deferred.factory``)."""
        if not any(unread.name == method for unread in cls.unread):
            return next((made for name, made in cls.factories if name == method), None)
        if (key, method) not in self._factories:
            summary = self._reader.summary(key.module)
            self._factories[key, method] = factory(summary, cls, method) if summary is not None else None
        return self._factories[key, method]

    def _expanded(self, module: str, chain: Chain) -> list[tuple[str, Chain]]:
        """A class name to resolve in ``module``; a lookup in a module-level dict of classes
        (``("_SUPPORT_VERSION", "{}")``) stands for each of its values."""
        if len(chain) == 2 and chain[1] == "{}":
            summary = self._reader.summary(module)
            return [(module, value) for name, values in (summary.class_maps if summary else ())
                    if name == chain[0] for value in values]
        return [(module, chain)]

    def dispatched(self, key: ClassKey) -> tuple[ClassKey, ...]:
        """The classes a dispatcher's ``__new__`` returns instances of instead of its own (vLLM's ``MiniCPMV``
        builds one of its version classes, picked from a dict by the checkpoint's version): what the registry
        entry really builds."""
        found = [self._reader.resolve_class(module, chain) for module, chain in self._factory(key, "__new__")]
        return tuple(dict.fromkeys(c for c in found if c is not None and c != key))

    def runs(self, key: ClassKey, owner: ClassKey, method: str) -> bool:
        """Whether ``owner``'s ``method`` runs for instances of ``key``: every override before it in the MRO
        calls up to it (``super().__init__(...)``), none skips past it (``super(Owner, self).__init__()``)
        or calls another base's instead. A call up that cannot be resolved counts as reaching it."""
        mro = self._reader.mro(key)
        if not method or owner not in mro:
            return True
        end = mro.index(owner)
        at = 0
        while at < end:
            here = mro[at]
            own = self._reader.defines(here, method)
            if own is None or own.kind not in ("method", "async_method"):
                at += 1
                continue
            cls = self._reader.class_summary(here)
            ups = [target for name, target in (cls.calls_up if cls else ()) if name == method]
            if not ups:
                return False  # the override never calls up: the base's body never runs
            nexts = [self._after(here, mro, at, target) for target in ups]
            if any(n is None for n in nexts):
                return True
            landed = [n for n in nexts if n is not None and n <= end]
            if not landed:
                return False  # every call up goes past ``owner``
            at = min(landed)
        return True

    def _after(self, here: ClassKey, mro: tuple[ClassKey, ...], at: int, target: Chain) -> int | None:
        """Where in ``mro`` a call up from ``mro[at]`` continues the search (None: cannot tell)."""
        if not target:
            return at + 1
        skip = target[-1] == "super"
        named = self._reader.resolve_class(here.module, target[:-1] if skip else target)
        if named is None and not skip and any(target in self._bases_written(later) for later in mro[at + 1:]):
            # ``nn.Module.__init__(self)``: a class from outside the tree that a later class of the MRO names as
            # its base comes after that class, so the call passes every class up to it
            return max(i for i, later in enumerate(mro) if target in self._bases_written(later)) + 1
        if named is None or named not in mro:
            return None
        return mro.index(named) + (1 if skip else 0)

    def _bases_written(self, key: ClassKey) -> tuple[Chain, ...]:
        cls = self._reader.class_summary(key)
        return cls.bases if cls is not None else ()

    def _default_for(self, key: ClassKey, owner: ClassKey, delegate: Delegate) -> tuple[ClassKey, Chain]:
        """Where a delegate's class comes from for instances of ``key``: a parameter's class default is the
        most-derived one along ``key``'s MRO (a subclass whose ``__init__`` has its own
        ``language_model_cls=Qwen3MoeLLMModel`` passes that one to ``super().__init__``)."""
        if delegate.via is None:
            return owner, delegate.callee
        method, param = delegate.via
        for candidate in self._reader.mro(key):
            if candidate == owner:
                break
            cls = self._reader.class_summary(candidate)
            for name, parameter, chain in cls.param_defaults if cls else ():
                if (name, parameter) == (method, param):
                    return candidate, chain
        return owner, delegate.callee
