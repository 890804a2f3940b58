"""Names across modules: what a dotted name written in a module stands for, following imports and re-exports.

The index knows every discovered file by module name but parses lazily: asking about a class loads its
module's summary, and following a base or an import loads the next one. So a question about one wrapper
touches the wrapper's file, its bases' and its inner model's files, not the whole tree. MROs and provisions
(:mod:`~spec_contract.engine.resolve.members`) and a wrapper's inner objects (:mod:`~spec_contract.engine.resolve.delegates`)
are its collaborators; it answers for them too.

Unknown names (bases from outside the tree such as ``torch.nn.Module`` or transformers'
``PreTrainedModel``) resolve to nothing and provide nothing; import and inheritance cycles are cut.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from spec_contract.engine.read.files import SourceFile
from spec_contract.engine.resolve.delegates import Delegates
from spec_contract.engine.resolve.keys import MAX_DEPTH, ClassKey, FunctionKey, ModuleKey, Provision, Resolved
from spec_contract.engine.resolve.members import Hierarchy
from spec_contract.engine.resolve.recording import Recorder
from spec_contract.engine.summarise.deferred import find_class, local_import
from spec_contract.engine.summarise.summary import Chain, ClassSummary, ImportBinding, Member, ModuleSummary

__all__ = ["ClassKey", "FunctionKey", "Index", "ModuleKey", "Provision", "Resolved"]


class Index(Recorder):
    """Lazy, memoised view of the tree's modules and classes: every answer that reads modules is memoised with
    the modules it read (see :class:`Recorder`), so the project re-checks a class only when one of those changed."""

    def __init__(self, files: dict[str, SourceFile], packages: frozenset[str],
                 load: Callable[[SourceFile], ModuleSummary | None], registry: tuple[str, ...] = (),
                 engine: tuple[str, tuple[str, ...]] | None = None,
                 architectures: dict[str, tuple[str, str]] | None = None) -> None:
        super().__init__()
        self._files = files
        # (engine package, worker modules) unless the tree has the engine package under its own name: then its
        # imports may be answered from a copy under another name, ``sglang_v059/`` or ``third_party/sglang/``
        # (see :meth:`engine_prefix`)
        self._engine = engine if engine is not None and engine[0] not in files and engine[0] not in packages else None
        self._engine_package = engine[0] if engine is not None else None
        self._engine_prefix: str | None = None
        self._prefix_misses: set[str] = set()
        self._packages = packages
        self._load = load  # reads (or scans, or takes from the cache) one file's summary
        self._summaries: dict[str, ModuleSummary | None] = {}
        self._resolved: dict[tuple[str, Chain], tuple[Resolved | None, frozenset[str]]] = {}
        self._classes: dict[ClassKey, tuple[ClassSummary | None, dict[str, Member]]] = {}
        self._imports: dict[str, dict[str, ImportBinding | None]] = {}
        self._hierarchy = Hierarchy(self, self)
        self._delegates = Delegates(self, self, registry, architectures or {})

    # modules -------------------------------------------------------------------------------------
    def summary(self, module: str) -> ModuleSummary | None:
        self.read(module)
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

    def members_of(self, key: ClassKey) -> dict[str, Member]:
        """The members a class's own body defines, by name (the class read as :meth:`class_summary` reads it)."""
        self.class_summary(key)
        return self._classes[key][1]

    def path_of(self, module: str) -> str | None:
        return source.path if (source := self._files.get(module)) else None

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
        """The module of this tree that an absolute import of ``name`` loads: ``name`` itself, except when the
        tree's copy of the engine package sits under another name (renamed or vendored), whose code still says
        ``from sglang.srt… import``: answered from the copy, or every inner model would be unknown."""
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

    def resolve(self, module: str, chain: Chain) -> Resolved | None:
        """What ``chain`` (as written in ``module``) names, following imports and re-exports."""
        if not chain or "()" in chain or "[]" in chain:
            return None
        return self.memoised(self._resolved, (module, chain), self._follow, module, chain, 1)

    def _follow(self, module: str, chain: Chain, depth: int) -> Resolved | None:
        if not chain or depth > MAX_DEPTH or "()" in chain or "[]" in chain:
            return None
        current = self._lookup(module, chain[0], depth)
        for segment in chain[1:]:
            if current is None:
                return None
            current = self._member(current, segment, depth)
        return current

    def _lookup(self, module: str, name: str, depth: int) -> Resolved | None:
        summary = self.summary(module) if depth <= MAX_DEPTH else None
        if summary is None:
            return None
        if summary.has_class(name):
            return ClassKey(module, name)
        for fn in summary.functions:
            if fn.qualname == name:
                return FunctionKey(module, name)
        for alias, value in summary.assignments:
            if alias == name:
                return self._follow(module, value, depth + 1)
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
            return ModuleKey(submodule) if submodule in self._files or submodule in self._packages else None
        if isinstance(owner, ClassKey):
            nested = ClassKey(owner.module, f"{owner.qualname}.{name}")
            return nested if self.class_summary(nested) is not None else None
        return None

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
        offers each branch's class (a module ``__getattr__`` that imports per platform too); plain resolution
        takes the last binding only (the default platform)."""
        summary = self.summary(module)
        if summary is None:
            return ()
        if summary.has_class(name):
            return (ClassKey(module, name),)
        found: list[ClassKey] = []
        for binding in (*summary.imports, *(b for _, b in summary.local_imports)):
            if binding.name == name and binding.member not in (None, "*"):
                key = self._member(ModuleKey(self.absolute(module, binding.module, binding.level)), binding.member, 1)
                if isinstance(key, ClassKey) and key not in found:
                    found.append(key)
        if not found:
            key = self.resolve_class(module, (name,))
            found = [key] if key is not None else []
        return tuple(found)

    def resolve_class(self, module: str, chain: Chain) -> ClassKey | None:
        return found if isinstance(found := self.resolve(module, chain), ClassKey) else None

    # classes: answered by the collaborators -----------------------------------------------------------
    def bases(self, key: ClassKey) -> tuple[ClassKey, ...]:
        return self._hierarchy.bases(key)

    def mro(self, key: ClassKey) -> tuple[ClassKey, ...]:
        return self._hierarchy.mro(key)

    def provision(self, key: ClassKey, member: str) -> Provision | None:
        return self._hierarchy.provision(key, member)

    def defines(self, key: ClassKey, name: str) -> Member | None:
        return self._hierarchy.defines(key, name)

    def names(self, key: ClassKey) -> frozenset[str] | None:
        return self._hierarchy.names(key)

    def forwarded_attrs(self, key: ClassKey) -> frozenset[str]:
        return self._hierarchy.forwarded_attrs(key)

    def language_attrs(self, key: ClassKey) -> tuple[str, ...]:
        return self._hierarchy.language_attrs(key)

    def registry_chosen(self, key: ClassKey, attr: str) -> bool:
        return self._hierarchy.registry_chosen(key, attr)

    def delegates(self, key: ClassKey) -> dict[str, tuple[ClassKey, ...]]:
        return self._delegates.of(key)

    def runs(self, key: ClassKey, owner: ClassKey, method: str) -> bool:  # owner's method runs for key's instances
        return self._delegates.runs(key, owner, method)

    def dispatched(self, key: ClassKey) -> tuple[ClassKey, ...]:
        return self._delegates.dispatched(key)

    def loaded_as(self, architecture: str) -> str:  # the class the registry loads for it (SGLang: the name itself)
        return self._delegates.loaded_as(architecture)


def methods_run(index: Index, cls: ClassKey) -> list[FunctionKey]:
    """The methods an instance of ``cls`` runs (its properties' getters too): each name's first definer along
    its MRO."""
    resolved: set[str] = set()
    out = []
    for owner in index.mro(cls):
        summary = index.class_summary(owner)
        for member in summary.members if summary is not None else ():
            if member.kind in ("method", "async_method", "property") and member.name not in resolved:
                resolved.add(member.name)
                out.append(FunctionKey(owner.module, f"{owner.qualname}.{member.name}"))
    return out
