"""Names across modules, class MROs and what each class provides.

The index knows every discovered file by module name but parses lazily: asking about a class loads its
module's summary, and following a base or an import loads the next one. So a question about one wrapper
touches the wrapper's file, its bases' and its inner model's files, not the whole tree.

Unknown names (bases from outside the tree such as ``torch.nn.Module`` or transformers'
``PreTrainedModel``) resolve to nothing and provide nothing; import and inheritance cycles are cut.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from spec_contract.engine.classes import ARCHITECTURE, REGISTRY
from spec_contract.engine.deferred import find_class, local_import
from spec_contract.engine.files import SourceFile
from spec_contract.engine.summary import Chain, ClassSummary, ImportBinding, Member, ModuleSummary

_MAX_DEPTH = 12


class ClassKey(NamedTuple):
    """A class by module and dotted qualname.

    Keys are hashed and compared hundreds of thousands of times per analysis (every memo of the index is
    keyed by them): as named tuples that happens in C. A :class:`FunctionKey` has a third field, so the two
    kinds of key never compare equal.
    """

    module: str
    qualname: str

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.qualname}" if self.module else self.qualname


class FunctionKey(NamedTuple):
    """A function or method by module and dotted qualname (a named tuple for speed, see :class:`ClassKey`)."""

    module: str
    qualname: str
    kind: str = "function"  # never equal to the ClassKey of the same name


@dataclass(frozen=True)
class ModuleKey:
    module: str


Resolved = ClassKey | FunctionKey | ModuleKey


@dataclass(frozen=True)
class Provision:
    """How a class provides a member: directly (``owner`` defines ``member``) or through ``__getattr__``."""

    owner: ClassKey
    member: Member | None  # None: a ``__getattr__`` that forwards to something unknown provides it


class Index:
    """Lazy, memoised view of the tree's modules and classes."""

    def __init__(self, files: dict[str, SourceFile], packages: frozenset[str],
                 load: Callable[[SourceFile], ModuleSummary | None], registry: tuple[str, ...] = (),
                 engine: tuple[str, tuple[str, ...]] | None = None,
                 architectures: dict[str, tuple[str, str]] | None = None) -> None:
        self._files = files
        # architecture name → (module, class) from the engine's model registry (see ``engine.registry``)
        self._architectures = architectures or {}
        # (engine package, worker modules) unless the tree has the engine package under its own name: then its
        # imports may be answered from a copy under another name, ``sglang_v059/`` or ``third_party/sglang/``
        # (see :meth:`engine_prefix`)
        self._engine = engine if engine is not None and engine[0] not in files and engine[0] not in packages else None
        self._engine_package = engine[0] if engine is not None else None
        self._engine_prefix: str | None = None
        self._prefix_misses: set[str] = set()
        self._registry = registry  # dotted classes the engine's model registry may hand a wrapper
        self._packages = packages
        self._resolved: dict[tuple[str, Chain], Resolved | None] = {}
        self._resolved_deps: dict[tuple[str, Chain], frozenset[str]] = {}
        self._load = load
        self._summaries: dict[str, ModuleSummary | None] = {}
        self._mro: dict[ClassKey, tuple[tuple[ClassKey, ...], frozenset[str]]] = {}
        self._delegates: dict[ClassKey, tuple[dict[str, tuple[ClassKey, ...]], frozenset[str]]] = {}
        self._recording: list[set[str]] = []
        self._classes: dict[ClassKey, tuple[ClassSummary | None, dict[str, Member]]] = {}
        self._provisions: dict[tuple[ClassKey, str], tuple[Provision | None, frozenset[str]]] = {}
        self._imports: dict[str, dict[str, ImportBinding]] = {}
        self._tables: dict[ClassKey, tuple[tuple[dict[str, tuple[ClassKey, Member]], tuple[tuple[ClassKey, str], ...]], frozenset[str]]] = {}

    # dependencies ----------------------------------------------------------------------------------
    def record(self) -> set[str]:
        """Start recording which modules the following questions read; pair with :meth:`stop`."""
        self._recording.append(set())
        return self._recording[-1]

    def stop(self, recorded: set[str]) -> frozenset[str]:
        assert self._recording and self._recording[-1] is recorded, "recordings nest"
        self._recording.pop()
        for outer in self._recording:
            outer |= recorded
        return frozenset(recorded)

    def _replay(self, modules: frozenset[str]) -> None:
        """A memoised answer depends on what computing it read: charge that to every open recording."""
        for outer in self._recording:
            outer |= modules

    # modules -------------------------------------------------------------------------------------
    def summary(self, module: str) -> ModuleSummary | None:
        for recording in self._recording:
            recording.add(module)
        if module not in self._summaries:
            source = self._files.get(module)
            self._summaries[module] = self._load(source) if source is not None else None
        return self._summaries[module]

    def class_summary(self, key: ClassKey) -> ClassSummary | None:
        summary = self.summary(key.module)  # records the module, whether or not the class is memoised
        if key not in self._classes:
            cls = find_class(summary, key.qualname) if summary else None
            self._classes[key] = (cls, {m.name: m for m in cls.members} if cls else {})
        return self._classes[key][0]

    def path_of(self, module: str) -> str | None:
        source = self._files.get(module)
        return source.path if source else None

    # names ---------------------------------------------------------------------------------------
    def absolute(self, module: str, imported: str, level: int) -> str:
        """The absolute module named by ``from <level dots><imported> import ...`` inside ``module``."""
        if level == 0:
            return self.engine_module(imported)
        summary = self.summary(module)
        package = module if summary is not None and summary.is_package else module.rpartition(".")[0]
        for _ in range(level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{imported}" if imported and package else (imported or package)

    def engine_module(self, name: str) -> str:
        """The module of this tree that an absolute import of ``name`` loads.

        Within the engine's own tree that is ``name`` itself, except when the tree's copy of the engine
        package sits under another name (a renamed or vendored copy): its code still says ``from sglang.srt…
        import``, and those imports are answered from the copy, or every wrapper's inner model would be
        unknown and the check an all-clear.
        """
        if self._engine is None:
            return name
        package = self._engine[0]
        if name != package and not name.startswith(package + "."):
            return name
        prefix = self.engine_prefix(name)
        return name if prefix is None else prefix + name[len(package):]

    def engine_prefix(self, example: str | None = None) -> str | None:
        """The module name of the tree's copy of the engine package (``sglang_v059``, ``third_party.sglang``).

        It is found from the first import of the engine package (``example``) whose module the tree has
        under a prefix that holds a worker: ``sglang.srt.managers.io_struct`` names
        ``sglang_v059.srt.managers.io_struct``. Imports of a single module below the package
        (``sglang.utils``) decide nothing: too many trees have some ``….utils``.
        """
        if self._engine_prefix is not None or self._engine is None or example is None:
            return self._engine_prefix
        package, workers = self._engine
        rest = example[len(package) + 1:]
        if "." not in rest or rest in self._prefix_misses:
            return None
        suffix = "." + rest
        candidates = [m[:-len(suffix)] for m in (*self._files, *self._packages) if m.endswith(suffix)]
        candidates = sorted(p for p in set(candidates) if any(w.startswith(p + ".") for w in workers))
        if not candidates:
            self._prefix_misses.add(rest)
            return None
        self._engine_prefix = min(candidates, key=len)
        return self._engine_prefix

    def engine_imports(self, summaries: Iterable[ModuleSummary]) -> tuple[int, int]:
        """(resolved, total): the absolute imports of the engine package in ``summaries`` (the workers), and
        how many of them name a module or package of the tree. Few resolved means the tree is not the
        engine's package, or not all of it: the contract and the check then see only part of the engine."""
        package = self._engine_package
        if package is None:
            return 0, 0
        resolved = total = 0
        for summary in summaries:
            for binding in (*summary.imports, *(b for _, b in summary.local_imports)):
                if binding.level or not (binding.module == package or binding.module.startswith(package + ".")):
                    continue
                total += 1
                target = self.engine_module(binding.module)
                resolved += target in self._files or target in self._packages
        return resolved, total

    def resolve(self, module: str, chain: Chain, _depth: int = 0) -> Resolved | None:
        """What ``chain`` (as written in ``module``) names, following imports and re-exports."""
        if not chain or _depth > _MAX_DEPTH or "()" in chain or "[]" in chain:
            return None
        if _depth == 0:
            key = (module, chain)
            if key not in self._resolved:
                recorded = self.record()
                try:
                    self._resolved[key] = self.resolve(module, chain, 1)
                finally:
                    self._resolved_deps[key] = self.stop(recorded)
            else:
                self._replay(self._resolved_deps[key])
            return self._resolved[key]
        current = self._lookup(module, chain[0], _depth)
        for segment in chain[1:]:
            if current is None:
                return None
            current = self._member(current, segment, _depth)
        return current

    def _lookup(self, module: str, name: str, depth: int) -> Resolved | None:
        summary = self.summary(module) if depth <= _MAX_DEPTH else None
        if summary is None:
            return None
        if summary.has_class(name):
            return ClassKey(module, name)
        for fn in summary.functions:
            if fn.qualname == name:
                return FunctionKey(module, name)
        for alias, value in summary.assignments:
            if alias == name:
                return self.resolve(module, value, depth + 1)
        binding = self._binding(module, summary, name)
        if binding is not None:
            target = self.absolute(module, binding.module, binding.level)
            if binding.member is None:
                return ModuleKey(target)
            return self._member(ModuleKey(target), binding.member, depth + 1)
        for binding in summary.imports:  # ``from x import *`` re-exports
            if binding.member == "*":
                found = self._lookup(self.absolute(module, binding.module, binding.level), name, depth + 1)
                if found is not None:
                    return found
        return None

    def _member(self, owner: Resolved, name: str, depth: int) -> Resolved | None:
        if isinstance(owner, ModuleKey):
            found = self._lookup(owner.module, name, depth + 1) if owner.module in self._files else None
            if found is not None:
                return found
            submodule = f"{owner.module}.{name}" if owner.module else name
            return ModuleKey(submodule) if submodule in self._files or self._is_namespace(submodule) else None
        if isinstance(owner, ClassKey):
            nested = ClassKey(owner.module, f"{owner.qualname}.{name}")
            return nested if self.class_summary(nested) is not None else None
        return None

    def _is_namespace(self, module: str) -> bool:
        return module in self._packages

    def import_target(self, module: str, name: str) -> str | None:
        """The module a top-level name of ``module`` comes from, without loading that module."""
        summary = self.summary(module)
        binding = self._binding(module, summary, name) if summary else None
        if binding is None:
            return None
        target = self.absolute(module, binding.module, binding.level)
        return f"{target}.{binding.member}" if binding.member and f"{target}.{binding.member}" in self._files else target

    def _binding(self, module: str, summary: ModuleSummary, name: str) -> ImportBinding | None:
        """The import that binds ``name`` in ``module`` (star imports aside): the last module-level one, else
        the last one inside a function or class.

        One dict per module, filled per name: the contract asks where each called name comes from, thousands
        of times.
        """
        found = self._imports.get(module)
        if found is None:
            found = self._imports[module] = {b.name: b for b in summary.imports if b.member != "*"}
        if name not in found:
            found[name] = local_import(summary, name)
        return found[name]

    def platform_choices(self, module: str, name: str) -> tuple[ClassKey, ...]:
        """The classes ``name`` of ``module`` may be: the class the module defines, else every class a
        module-level import binds to that name. A package that picks its implementation per platform
        (``if current_platform.is_rocm(): from .amd.model import X … else: from .nvidia.model import X``)
        offers each branch's class; plain resolution takes the last binding only (the default platform)."""
        summary = self.summary(module)
        if summary is None:
            return ()
        if summary.has_class(name):
            return (ClassKey(module, name),)
        found: list[ClassKey] = []
        for binding in summary.imports:
            if binding.name == name and binding.member not in (None, "*"):
                key = self._member(ModuleKey(self.absolute(module, binding.module, binding.level)), binding.member, 1)
                if isinstance(key, ClassKey) and key not in found:
                    found.append(key)
        if not found:
            key = self.resolve_class(module, (name,))
            found = [key] if key is not None else []
        return tuple(found)

    def resolve_class(self, module: str, chain: Chain) -> ClassKey | None:
        found = self.resolve(module, chain)
        return found if isinstance(found, ClassKey) else None

    # classes -------------------------------------------------------------------------------------
    def bases(self, key: ClassKey) -> tuple[ClassKey, ...]:
        cls = self.class_summary(key)
        if cls is None:
            return ()
        out = []
        for base in cls.bases:
            resolved = self.resolve_class(key.module, base)
            if resolved is not None and resolved != key:
                out.append(resolved)
        return tuple(out)

    def mro(self, key: ClassKey) -> tuple[ClassKey, ...]:
        """C3 linearisation over the bases the index can resolve; cycles and conflicts degrade gracefully."""
        return self._mro_of(key, frozenset())

    def _mro_of(self, key: ClassKey, active: frozenset[ClassKey]) -> tuple[ClassKey, ...]:
        if key in self._mro:
            mro, modules = self._mro[key]
            self._replay(modules)
            return mro
        recorded = self.record()
        try:
            return self._compute_mro(key, active)
        finally:
            modules = self.stop(recorded)
            if not active and key in self._mro:
                self._mro[key] = (self._mro[key][0], modules)

    def _compute_mro(self, key: ClassKey, active: frozenset[ClassKey]) -> tuple[ClassKey, ...]:
        if key in active or len(active) > _MAX_DEPTH * 4:  # an inheritance cycle: cut it here
            return (key,)
        bases = self.bases(key)
        sequences = [list(self._mro_of(b, active | {key})) for b in bases] + [list(bases)]
        result = [key]
        while any(sequences):
            sequences = [s for s in sequences if s]
            for seq in sequences:
                head = seq[0]
                if not any(head in other[1:] for other in sequences):
                    break
            else:  # inconsistent hierarchy: fall back to depth-first order without duplicates
                for seq in sequences:
                    result.extend(k for k in seq if k not in result)
                break
            if head not in result:
                result.append(head)
            for seq in sequences:
                if seq and seq[0] == head:
                    del seq[0]
        mro = tuple(result)
        if not active:
            self._mro[key] = (mro, frozenset())
        return mro

    def provision(self, key: ClassKey, member: str, _depth: int = 0) -> Provision | None:
        """Whether instances of ``key`` have ``member``: own body, bases, or a forwarding ``__getattr__``."""
        if _depth == 0:  # memoised: a popular inner model is asked about every contract member per wrapper
            memo = self._provisions.get((key, member))
            if memo is not None:
                self._replay(memo[1])
                return memo[0]
            recorded = self.record()
            try:
                found = self.provision(key, member, 1)
            finally:
                modules = self.stop(recorded)
            self._provisions[(key, member)] = (found, modules)
            return found
        members, forwards = self._provided(key)
        own = members.get(member)
        if own is not None:
            return Provision(*own)
        if _depth > 4:
            return None
        for owner, forward in forwards:
            if forward == "":
                return Provision(owner, None)
            inners = self.delegates(key).get(forward, ())
            if not inners:
                return Provision(owner, None)  # forwards to an object of unknown class
            # The object may be of any of the candidate classes: the member is there only if each has it.
            found = [self.provision(inner, member, _depth + 1) for inner in inners]  # depth bounds the recursion
            if all(f is not None for f in found):
                return found[0]
        return None

    def _provided(self, key: ClassKey) -> tuple[dict[str, tuple[ClassKey, Member]], tuple[tuple[ClassKey, str], ...]]:
        """Every member instances of ``key`` get from their MRO (name → first owner and its member), and the
        MRO's classes with a ``__getattr__`` (owner, what it forwards to), in MRO order.

        Built once per class: provisions are asked for every contract member of every wrapper and inner
        model, and walking the MRO each time was most of the check. Computing the MRO already read every
        class in it, so the table reads no module the walk would not.
        """
        if key in self._tables:
            table, modules = self._tables[key]
            self._replay(modules)
            return table
        recorded = self.record()
        try:
            members: dict[str, tuple[ClassKey, Member]] = {}
            forwards = []
            for owner in self.mro(key):
                cls = self.class_summary(owner)
                if cls is None:
                    continue
                for name, own in self._classes[owner][1].items():
                    members.setdefault(name, (owner, own))
                if cls.getattr_forward is not None:
                    forwards.append((owner, cls.getattr_forward))
            table = (members, tuple(forwards))
        finally:
            modules = self.stop(recorded)
        self._tables[key] = (table, modules)
        return table

    def delegates(self, key: ClassKey) -> dict[str, tuple[ClassKey, ...]]:
        """attribute → candidate inner classes, from ``self.<attr> = <Class>(...)`` anywhere in the MRO."""
        if key in self._delegates:
            result, modules = self._delegates[key]
            self._replay(modules)
            return result
        recorded = self.record()
        try:
            result = self._compute_delegates(key)
        finally:
            modules = self.stop(recorded)
        self._delegates[key] = (result, modules)
        return result

    def language_attrs(self, key: ClassKey) -> tuple[str, ...]:
        """The attributes a class of the MRO marks as its language model (``_mark_language_model`` blocks)."""
        found: list[str] = []
        for owner in self.mro(key):
            cls = self.class_summary(owner)
            found += [a for a in (cls.language_attrs if cls else ()) if a not in found]
        return tuple(found)

    def forwarded_attrs(self, key: ClassKey) -> frozenset[str]:
        """The attributes a ``__getattr__`` in the class's MRO forwards unknown names to."""
        return frozenset(forward for _, forward in self._provided(key)[1] if forward)

    def registry_chosen(self, key: ClassKey, attr: str) -> bool:
        """Whether ``self.<attr>`` is built from a class the model registry picks (candidates from the profile)."""
        for owner in self.mro(key):
            cls = self.class_summary(owner)
            if cls is not None and any(d.attr == attr and d.callee == REGISTRY for d in cls.delegates):
                return True
        return False

    def _constructed(self, key: ClassKey, owner: ClassKey, callee: Chain) -> list[tuple[str, Chain]]:
        """The class names a delegate's value is built from, as (module, chain) to resolve.

        ``self.llm = self.init_llm(...)`` calls the most-derived ``init_llm`` of the class being checked,
        so factory methods are looked up along ``key``'s MRO, not the assigning class's.
        """
        if callee == REGISTRY:  # chosen at run time: the profile names the candidates
            return [(self.engine_module(module), (name,))
                    for module, _, name in (c.rpartition(".") for c in self._registry)]
        if callee[0] == ARCHITECTURE:  # built by the registry from an architecture name (unknown: nothing)
            found = self._architectures.get(callee[1]) if len(callee) == 2 else None
            choices = self.platform_choices(self.engine_module(found[0]), found[1]) if found else ()
            return [(choice.module, (choice.qualname,)) for choice in choices]
        if len(callee) == 2 and callee[1] == "{}":  # a lookup in a module-level dict of classes
            summary = self.summary(owner.module)
            return [(owner.module, value) for name, values in (summary.class_maps if summary else ())
                    if name == callee[0] for value in values]
        if callee[0] != "self":
            return [(owner.module, callee)]
        if len(callee) != 2:
            return []
        for candidate in self.mro(key):
            cls = self.class_summary(candidate)
            for name, made in cls.factories if cls else ():
                if name == callee[1]:
                    return [(candidate.module, chain) for chain in made]
        return []

    def _default_for(self, key: ClassKey, owner: ClassKey, delegate) -> tuple[ClassKey, Chain]:
        """Where a delegate's class comes from for instances of ``key``: a parameter's class default is the
        most-derived one along ``key``'s MRO (a subclass whose ``__init__`` has its own
        ``language_model_cls=Qwen3MoeLLMModel`` passes that one to ``super().__init__``)."""
        if delegate.via is None:
            return owner, delegate.callee
        method, param = delegate.via
        for candidate in self.mro(key):
            if candidate == owner:
                break
            cls = self.class_summary(candidate)
            for name, parameter, chain in cls.param_defaults if cls else ():
                if (name, parameter) == (method, param):
                    return candidate, chain
        return owner, delegate.callee

    def _compute_delegates(self, key: ClassKey) -> dict[str, tuple[ClassKey, ...]]:
        out: dict[str, list[ClassKey]] = {}
        for owner in self.mro(key):
            cls = self.class_summary(owner)
            if cls is None:
                continue
            for delegate in cls.delegates:
                source, chain = self._default_for(key, owner, delegate)
                for module, callee in self._constructed(key, source, chain):
                    inner = self.resolve_class(module, callee)
                    if inner is not None and inner != key and inner not in out.setdefault(delegate.attr, []):
                        out[delegate.attr].append(inner)
        return {attr: tuple(classes) for attr, classes in out.items() if classes}
