"""Which roles classes can play, read from the engine's code (issue 36, item 6), kept between analyses.

The profile's class globs guess a role from a name; the engine's code says it:

* **never the target**: the architectures the engine's generation test refuses (SGLang's
  ``is_generation_model``, read in ``resolve.generation``), and the registered classes that lack a member of
  the Protocol vLLM's ``is_text_generation_model`` tests with ``isinstance`` (``compute_logits``: its
  ``--runner generate`` refuses any other). A class the Protocol accepts can be the target, whatever a
  ``non-target-classes`` or ``draft-only-classes`` glob says (vLLM's ``Eagle2_5_VLForConditionalGeneration`` is
  a vision-language model, no EAGLE head): the globs stand in only where the code says nothing, and a glob the
  code contradicts is said in a note;
* **a draft head**: the architectures the engine's draft-config rewrites write and the classes its registry
  registers only as draft models (``resolve.draft_heads``), and a registered class made from a registered draft
  head (SGLang 0.5.23's ``MuseGlimmerAssistantModel(DFlashDraftModel)``, for checkpoints that name it);
* **no role at all**: registered classes whose ``__init__`` always raises (``resolve.stubs``), which are not
  checked.

A class whose hierarchy is not all known (a base the index cannot resolve inside the tree: a call, a name bound
at run time) may have the Protocol's members there: it is not judged, so a test that cannot be read only
keeps a class in more roles, never fewer.

What a class's verdict read is kept with it (the modules, as the check's results are), and what the engine's
functions said with the digest of their file, so a run on an unchanged tree reads nothing again; the reader's
state is saved with the run's results.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

from spec_contract.engine.config import Config, RoleFacts, named_by
from spec_contract.engine.read.sources import Sources
from spec_contract.engine.resolve.draft_heads import read_rewrite, rewrite_path
from spec_contract.engine.resolve.generation import generation_test_path, read_generation_test
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.registry import ModelRegistry
from spec_contract.engine.resolve.stubs import never_built
from spec_contract.engine.summarise.summary import Chain

Protocols = tuple[frozenset[str], ...]  # the members of each Protocol the generation test accepts
_BUILTINS = frozenset(dir(builtins))


class ClassRoles(NamedTuple):
    """What the code says of one registered class, and what that was read from."""

    read: frozenset[str]  # the modules its verdict read
    protocols: Protocols  # what it was judged against
    generates: bool | None  # the generation Protocol's answer; None: no Protocol, or its hierarchy is not known
    stub: bool  # its ``__init__`` always raises
    bases: tuple[ClassKey, ...] = ()  # its MRO past itself


class Roles(NamedTuple):
    """An analysis's reading: the facts, the classes to check (the registered ones less the stubs), and the
    notes that say which profile facts the code contradicts."""

    facts: RoleFacts
    buildable: list[ClassKey]
    notes: tuple[str, ...]


class RoleReader:
    """The roles read from the tree, kept between analyses (see the module docstring); ``saved`` is what a
    results store keeps, ``unsaved`` whether it changed since."""

    def __init__(self) -> None:
        # ((path, digest), refused architectures, Protocols, modules read) of the generation test
        self.generation: tuple[tuple[str | None, str], frozenset[str], Protocols, frozenset[str]] | None = None
        # dotted → (path, digest, the architectures it writes, a note when the tree lacks it)
        self.rewrites: dict[str, tuple[str | None, str, frozenset[str], str | None]] = {}
        self.classes: dict[ClassKey, ClassRoles] = {}
        self.unsaved = False
        # the last facts made from ``classes`` and what else they were made from (see ``read``); None: made anew
        self._made: tuple[frozenset[str], frozenset[str], ModelRegistry | None, Config, RoleFacts,
                          tuple[str, ...]] | None = None

    @property
    def saved(self) -> dict[str, Any]:
        return {"generation": self.generation, "rewrites": self.rewrites, "classes": self.classes}

    def restore(self, saved: dict[str, Any] | None) -> None:
        if saved:
            self.generation, self.rewrites, self.classes = saved["generation"], saved["rewrites"], saved["classes"]
            self._made = None

    def read(self, config: Config, index: Index, registry: ModelRegistry | None, checked: list[ClassKey],
             changed: set[str], sources: Sources, whole: bool) -> Roles:
        """The roles for an analysis that checks ``checked`` (``whole``: every registered class, so the verdicts
        of classes no longer registered are dropped)."""
        def text(path: str) -> str | None:
            return sources.text(path)[0]

        refused, protocols = self._generation(config, index, sources, changed, text)
        for key in checked:
            kept = self.classes.get(key)
            if kept is None or kept.protocols != protocols or kept.read & changed:
                self.classes[key] = _judge(index, key, protocols, config, text)
                self.unsaved, self._made = True, None
        if whole and len(self.classes) > len(checked):
            wanted = set(checked)
            self.classes = {key: roles for key, roles in self.classes.items() if key in wanted}
            self.unsaved, self._made = True, None
        rewritten, notes = self._rewrites(config, index, sources, text)
        # made again only when a verdict or what else they read changed: an edit's analysis judges no class again
        # unless the edit changed one, and the facts of every class cost a tenth of a new line's analysis. The
        # configuration is asked for its globs: the roles it carries are the last facts, replaced here
        made, settings = self._made, replace(config, read_roles=RoleFacts())
        if made is None or made[:2] != (refused, rewritten) or made[2] is not registry or made[3] != settings:
            facts = _facts(self.classes, refused, rewritten, registry, config)
            made = self._made = (refused, rewritten, registry, settings, facts, _contradicted(config, facts))
        return Roles(made[4], [key for key in checked if not self.classes[key].stub], (*notes, *made[5]))

    def _generation(self, config: Config, index: Index, sources: Sources, changed: set[str],
                    text: Callable[[str], str | None]) -> tuple[frozenset[str], Protocols]:
        """What the generation test refuses and the Protocols it accepts, read again only when its file, or a
        module its Protocols were read from, changed."""
        path = generation_test_path(config, index)
        where = (path, sources.digest(path) if path is not None else "")
        if self.generation is not None and self.generation[0] == where and not self.generation[3] & changed:
            return self.generation[1], self.generation[2]
        recorded = index.record()
        try:
            found = read_generation_test(config, index, text)
            module = index.engine_module(config.generation_test.rpartition(".")[0]) if config.generation_test else ""
            protocols = tuple(_members(index, module, written, config) for written in found.protocols)
        finally:
            modules = index.stop(recorded)
        protocols = tuple(members for members in protocols if members)
        self.generation = (where, found.refused, protocols, modules)
        self.unsaved = True
        return found.refused, protocols

    def _rewrites(self, config: Config, index: Index, sources: Sources,
                  text: Callable[[str], str | None]) -> tuple[frozenset[str], list[str]]:
        """The architectures the draft rewrites write, each read again only when its file changed, and the notes
        on those the tree lacks."""
        names: set[str] = set()
        notes = []
        for dotted in config.draft_rewrites:
            path = rewrite_path(dotted, index)
            digest = sources.digest(path) if path is not None else ""
            kept = self.rewrites.get(dotted)
            if kept is None or kept[:2] != (path, digest):
                kept = self.rewrites[dotted] = (path, digest, *read_rewrite(dotted, index, text))
                self.unsaved = True
            names |= kept[2]
            notes += [kept[3]] if kept[3] else []
        return frozenset(names), notes


def _members(index: Index, module: str, written: str, config: Config) -> frozenset[str]:
    """The members the Protocol ``written`` (as written in ``module``) defines itself, its dunders and the
    members every model has aside; empty when it names no class of the tree."""
    key = index.resolve_class(module, tuple(written.split(".")))
    if key is None:
        return frozenset()
    return frozenset(name for name in index.members_of(key)
                     if not (name.startswith("__") and name.endswith("__")) and name not in config.ignored_members)


def _judge(index: Index, key: ClassKey, protocols: Protocols, config: Config,
           text: Callable[[str], str | None]) -> ClassRoles:
    """The class's verdict. Whether it has a Protocol's members is read from the names its MRO's classes may
    define (``Index.names``: the words of a class not yet parsed), so no body is parsed for it before the
    check: a member outside them is surely lacking; one among them is taken as had (a class that only
    mentions ``compute_logits`` is judged able to generate, as every class was before the test was read)."""
    recorded = index.record()
    try:
        stub = never_built(index, key, text)
        generates = None
        if protocols and not stub:
            names = index.names(key)
            if names is None or any(members <= names for members in protocols):
                generates = True
            elif _hierarchy_known(index, key, config, frozenset().union(*protocols) - names):
                generates = False
    finally:
        read = index.stop(recorded)
    return ClassRoles(read, protocols, generates, stub, index.mro(key)[1:])


def _hierarchy_known(index: Index, key: ClassKey, config: Config, lacked: frozenset[str],
                     seen: frozenset[ClassKey] = frozenset()) -> bool:
    """Whether every base along the class's MRO is a class of the tree, or comes from outside it (``torch``'s
    ``nn.Module``, ``typing``'s ``Generic[T]``) and so defines nothing of the engine's own Protocols, or is a
    class of the tree written with type arguments (``VllmModel[T_co]``, which the MRO leaves out) that cannot
    define the members the class lacks (``lacked``) either."""
    for owner in index.mro(key):
        cls = index.class_summary(owner)
        for base in cls.bases if cls is not None else ():
            if index.resolve_class(owner.module, base) is not None or _outside(index, owner.module, base, config):
                continue
            generic = index.resolve_class(owner.module, base[:base.index("[]")]) if "[]" in base else None
            if generic is None or generic in seen:
                return False
            names = index.names(generic)
            if names is None or names & lacked or not _hierarchy_known(index, generic, config, lacked,
                                                                        seen | {key, generic}):
                return False
    return True


def _outside(index: Index, module: str, base: Chain, config: Config) -> bool:
    if "()" in base:  # a class made by a call: anything
        return False
    source = index.import_target(module, base[0])
    if source is None:  # not imported: a builtin (``object``), else bound here to something not a class
        return base[0] in _BUILTINS
    top = source.partition(".")[0]
    return index.path_of(source) is None and top not in (config.engine_package.partition(".")[0],
                                                         module.partition(".")[0])


def _facts(classes: dict[ClassKey, ClassRoles], refused: frozenset[str], rewritten: frozenset[str],
           registry: ModelRegistry | None, config: Config) -> RoleFacts:
    """The facts by class name (an architecture named through the registry, when the engine has one)."""
    def class_of(architecture: str) -> str:
        found = registry.architectures.get(architecture) if registry is not None else None
        return found[1] if found is not None else architecture

    generating: dict[bool, set[str]] = {True: set(), False: set()}
    for key, roles in classes.items():
        if roles.generates is not None and not roles.stub:
            generating[roles.generates].add(_name(key))
    # a name one of its classes generates with (another platform's) can be the target
    never = {class_of(a) for a in refused} | (generating[False] - generating[True])
    targets = generating[True] - never
    heads = {class_of(a) for a in rewritten}
    served: set[str] = set()
    if registry is not None:
        heads |= {name for _, name in registry.drafts}
        served = {name for module, name in registry.registered if (module, name) not in registry.drafts}
    heads -= served
    # a registered class made from a registered draft head is one too (SGLang 0.5.23's MuseGlimmerAssistantModel,
    # a DFlashDraftModel for checkpoints that name it)
    judged = replace(config, read_roles=RoleFacts(frozenset(never), frozenset(targets), frozenset(heads)))
    made = {_name(key) for key, roles in classes.items() if _name(key) not in served
            and any(base in classes and judged.draft_only(_name(base)) for base in roles.bases)}
    return RoleFacts(frozenset(never), frozenset(targets - made), frozenset(heads | made))


def _name(key: ClassKey) -> str:
    return key.qualname.rpartition(".")[2]


def _contradicted(config: Config, facts: RoleFacts) -> tuple[str, ...]:
    """A note for each class glob of the profile that names classes the engine's generation test accepts."""
    notes = []
    for key, globs in (("draft-only-classes", config.draft_only_classes),
                       ("non-target-classes", config.non_target_classes)):
        named = sorted(n for n in facts.targets if n not in facts.draft_heads and named_by(n, globs))
        if named:
            shown = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
            notes.append(f"'{key}' names {shown}, but the engine's generation test accepts "
                         f"{'it' if len(named) == 1 else 'them'} as a model it serves: checked as the target too")
    return tuple(notes)
