"""Which model classes an analysis checks: those the engine's model registry names (``registry-files``), or
those each model file registers in its entry-class variable; remembered per file by digest, so an unchanged
file is not parsed again (and saved with the run's results)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from spec_contract.engine.config import Config
from spec_contract.engine.read.files import SourceFile, glob_match, text_digest
from spec_contract.engine.read.layout import Layout
from spec_contract.engine.read.sources import Sources
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.registry import ModelRegistry, build_registry
from spec_contract.engine.summarise.deferred import all_classes, find_class, top_level_classes
from spec_contract.engine.summarise.summary import ClassSummary

Known = dict[str, tuple[str, tuple[str, ...]]]  # model path → (digest, the classes checked there)
# model path → (digest, (dispatcher, the classes of the same file its ``__new__`` builds) for each that has some)
Dispatched = dict[str, tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]]
# ``from .nvidia.model import X`` (also indented, in a per-platform branch or a module ``__getattr__``)
_RELATIVE_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_WORD = re.compile(r"\w+")


def registered_classes(summary_classes: Iterable[ClassSummary], entry: tuple[str, ...] | None,
                       entry_variable: str | None) -> list[ClassSummary]:
    """The classes a model file registers with the engine's loader (all, when the profile names no registry)."""
    if entry_variable is None:
        return [c for c in summary_classes if "." not in c.qualname]
    if entry is None:
        return []
    return [c for c in summary_classes if c.qualname in entry]  # ``EntryClass = Outer.W`` names a nested one


class Registered:
    def __init__(self, sources: Sources, config: Config) -> None:
        self._sources = sources
        self._config = config
        self.known: Known = {}
        self.dispatched: Dispatched = {}
        self.registry: ModelRegistry | None = None  # the engine's model registry, when the profile reads one
        self.unsaved = False  # ``known`` grew since the results were last saved

    def model_registry(self, layout: Layout) -> tuple[ModelRegistry | None, bool]:
        """The engine's model registry when the profile reads one (``registry-files``) and the tree has it,
        and whether it was read again because a registry file's text changed: then every class is to be
        checked again (what an architecture name builds, and which classes are registered, may have changed)."""
        if not self._config.registry_files:
            return None, False
        sources = [f for f in layout.files if glob_match(f.rel, self._config.registry_files)]
        if not sources:
            return None, False
        texts = [(f.module, self._sources.text(f.path)[0] or "") for f in sources]
        digest = text_digest("\0".join(f"{module}\0{self._sources.digest(f.path)}"
                                       for (module, _), f in zip(texts, sources)))
        replaced = False
        if self.registry is None or self.registry.digest != digest:
            replaced = self.registry is not None
            self.registry = build_registry(texts, self._config.registry_tables, self._config.engine_package, digest,
                                           self._config.draft_tables)
        return self.registry, replaced

    def registry_classes(self, registry: ModelRegistry, index: Index, layout: Layout,
                         focus: frozenset[str] | None) -> list[ClassKey]:
        """The registered classes, where they are defined: a registry entry may name a package that picks
        its class per platform and re-exports it (then each platform's class is checked), or a dispatcher
        whose ``__new__`` builds one of several classes (then each of those is checked instead)."""
        wanted: dict[str, list[str]] = {}
        for module, name in registry.registered:
            wanted.setdefault(module, []).append(name)
        found: dict[ClassKey, None] = {}
        for module, names in wanted.items():
            source = layout.by_module.get(index.engine_module(module))
            if source is None:
                continue
            defined_in = source.module
            digest = self._sources.digest(source.path) + registry.digest
            known = self.known.get(source.path)
            if known is None or known[0] != digest:
                summary = index.summary(defined_in)
                own = tuple(n for n in names if summary is not None and summary.has_class(n))
                known = self.known[source.path] = (digest, own)
                self.unsaved = True
            built = self.dispatched.get(source.path)
            if built is None or built[0] != digest:
                built = self.dispatched[source.path] = (digest, _dispatchers(index, defined_in, known[1]))
                self.unsaved = True
            # a dispatcher's ``__new__`` builds another class: that class is what runs, and is checked instead
            instead = dict(built[1])
            keys = [ClassKey(defined_in, d) for n in known[1] for d in instead.get(n, (n,))]
            keys += [k for n in names if n not in known[1] for k in index.platform_choices(defined_in, n)]
            for key in keys:
                if focus is None or index.path_of(key.module) in focus:
                    found[key] = None
        return list(found)

    def listed(self, registry: ModelRegistry, layout: Layout, picked: bool) -> dict[str, tuple[str, ...]]:
        """The classes ``registry`` names in each module; with ``picked``, also the modules a registered
        package imports them from, read from the text of its ``__init__`` (``from .nvidia.model import
        BeamForCausalLM``, one per platform: what ``Index.platform_choices`` reads), for a cold run to scan
        and parse with the registry's modules. A guess from the text: a module it misses is read when asked."""
        out: dict[str, tuple[str, ...]] = {}
        for module, name in registry.registered:
            out[module] = (*out.get(module, ()), name)
        for module, names in list(out.items()) if picked else ():
            source = layout.by_module.get(module)
            if source is None or not source.path.endswith("__init__.py"):
                continue
            for dots, relative, imported in _RELATIVE_IMPORT.findall(self._sources.text(source.path)[0] or ""):
                found = set(names).intersection(_WORD.findall(imported))
                if found:
                    package = module.split(".")
                    base = package[:len(package) - len(dots) + 1]
                    pick = ".".join(base + [relative] if relative else base)
                    out[pick] = tuple(sorted({*out.get(pick, ()), *found}))
        return out

    def registered_in(self, source: SourceFile, index: Index, out_of_tree: bool) -> tuple[str, ...]:
        """The classes a model file registers, remembered by digest so an unchanged file is not parsed."""
        digest = self._sources.digest(source.path)
        known = self.known.get(source.path)
        if known is not None and known[0] == digest:
            return known[1]
        entry_variable = self._config.entry_class_variable
        names: tuple[str, ...] = ()
        text = self._sources.text(source.path)[0]
        # A cheap text filter first: no registry entry, no registered model (a file without text goes on,
        # for its problem to be reported). Searched from the end, where a model file registers its classes
        # (SGLang 0.5.23's 300 model files: 0.8 ms, against 3.2 from the start)
        if out_of_tree or not entry_variable or text is None or text.rfind(entry_variable) >= 0:
            summary = index.summary(source.module)
            if summary is not None:
                entry = summary.entry_classes
                variable = entry_variable if (entry is not None or not out_of_tree) else None
                candidates = all_classes(summary) if variable is None else [
                    *top_level_classes(summary, [n for n in entry or () if "." not in n]),
                    *filter(None, (find_class(summary, n) for n in entry or () if "." in n))]
                # a class defined twice is one class (its last definition, see deferred.find_class)
                names = tuple(dict.fromkeys(c.qualname for c in registered_classes(candidates, entry, variable)))
        self.known[source.path] = (digest, names)
        self.unsaved = True
        return names


def _dispatchers(index: Index, module: str, names: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Of the registered classes ``module`` defines, those whose own ``__new__`` builds other classes of the
    module (vLLM's ``MiniCPMV`` and its version classes), with those classes: read once per file text, since
    it parses the classes."""
    out = []
    for name in names:
        key = ClassKey(module, name)
        if "__new__" in index.members_of(key):
            built = tuple(d.qualname for d in index.dispatched(key) if d.module == module)
            if built:
                out.append((name, built))
    return tuple(out)
