"""What a wrapper class has of each contract member: its own, or an inner model's it could forward.

The check (which members a class fails to forward) and hover (each member's status) ask the same questions,
so both go through :class:`MemberLookup`: whether the class provides a member (own body, MRO, properties,
attributes, a forwarding ``__getattr__``) and, if one of its delegate attributes holds an inner model that
defines it (``self.language_model = Inner(...)``; one level deeper too), which one.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import NamedTuple

from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import ClassKey, Index, Provision
from spec_contract.engine.results import CallSite, Provider
from spec_contract.engine.summarise.summary import Member


class MemberState(str, enum.Enum):
    """A contract member on a class: ``provided`` (the class has it, no inner does), ``forwarded`` (it has it
    and an inner does too) or ``missing`` (an inner has it, the class does not). A ``str``, as hover words it."""

    PROVIDED = "provided"
    FORWARDED = "forwarded"
    MISSING = "missing"

    def __str__(self) -> str:
        return self.value


class Inner(NamedTuple):
    """An inner model that really defines a member (not through an unknown ``__getattr__``)."""

    delegate: str  # the attribute path on the wrapper: "language_model", "minicpmv.llm"
    key: ClassKey  # the inner class
    owner: ClassKey  # the class that defines the member: the inner class or one of its bases
    member: Member


def _ordered_delegates(delegates: dict[str, tuple[ClassKey, ...]], preferred: tuple[str, ...],
                       only: bool = False, marked: tuple[str, ...] = ()) -> list[tuple[str, tuple[ClassKey, ...]]]:
    """The delegates, those ``marked`` as the language model then the preferred names first; with ``only``
    (the profile's ``restrict-delegates``) no other: a ``self.logits_processor = LogitsProcessor(…)`` is
    then a helper, never an inner model to forward to."""
    rank = {name: i for i, name in enumerate(dict.fromkeys(marked + preferred))}
    return sorted(((name, inners) for name, inners in delegates.items() if not only or name in rank),
                  key=lambda item: (rank.get(item[0], len(rank)), item[0]))


_UNASKED = frozenset({"\0"})  # no class's names asked yet (None is an answer: any name)


class _Inners:
    """One wrapper's delegates, and theirs one level deeper, ordered once per class rather than per member.

    Each list is built the first time a member needs it, so a class is charged only with the modules its
    check really reads (as the index records them), and asked about every contract member in turn. The names
    each class may provide (``Index.names``) are kept too: a lookup lives inside one class's check, whose
    recording holds the modules they read from the first ask on.
    """

    def __init__(self, index: Index, wrapper: ClassKey, preferred: tuple[str, ...], only: bool = False) -> None:
        self._index = index
        self._wrapper = wrapper
        self._preferred = preferred
        self._only = only
        self._direct: list[tuple[str, tuple[ClassKey, ...]]] | None = None
        self._forwarded: frozenset[str] = frozenset()  # attributes the wrapper's ``__getattr__`` forwards to
        self._deeper: dict[ClassKey, list[tuple[str, tuple[ClassKey, ...]]]] = {}
        self._names: dict[ClassKey, frozenset[str] | None] = {}
        # the names each inner class may provide, and those one level deeper (see ``_lacked``)
        self._direct_names: dict[ClassKey, frozenset[str] | None] | None = None
        self._deeper_names: list[frozenset[str] | None] | None = None

    def provision(self, key: ClassKey, member: str) -> Provision | None:
        """``Index.provision``, answered None without asking it when no class of the MRO can define the member."""
        names = self._names_of(key)
        if names is not None and member not in names:
            return None
        return self._index.provision(key, member)

    def _names_of(self, key: ClassKey) -> frozenset[str] | None:
        names = self._names.get(key, _UNASKED)
        if names is _UNASKED:
            names = self._names[key] = self._index.names(key)
        return names

    def _lacked(self, member: str) -> bool:
        """Whether no inner class can define ``member``, nor one a level deeper (see ``Index.names``): most members
        :meth:`provider` is asked for (the class lacks them, and so do its inner models), told by the names alone
        rather than a walk of the delegates. The deeper classes are read only for a member every inner class lacks,
        as the walk reads them."""
        if self._direct_names is None:
            self._direct_names = {inner: self._names_of(inner)
                                  for _, candidates in self._read_direct() for inner in candidates}
        if not all(names is not None and member not in names for names in self._direct_names.values()):
            return False
        if self._deeper_names is None:
            asked = {self._wrapper, *self._direct_names}  # the walk does not ask them again
            self._deeper_names = [self._names_of(sub) for inner in self._direct_names
                                  for _, subs in self._delegates_of(inner) for sub in subs if sub not in asked]
        return all(names is not None and member not in names for names in self._deeper_names)

    def _marked(self, key: ClassKey) -> tuple[str, ...]:
        """The attributes ``key`` marks as its language model; asked only when delegates are restricted
        (looking them up reads the MRO's summaries, which the unrestricted check need not)."""
        return self._index.language_attrs(key) if self._only else ()

    def _delegates_of(self, inner: ClassKey) -> list[tuple[str, tuple[ClassKey, ...]]]:
        found = self._deeper.get(inner)
        if found is None:
            found = self._deeper[inner] = _ordered_delegates(self._index.delegates(inner), self._preferred,
                                                             self._only, self._marked(inner))
        return found

    def _read_direct(self) -> list[tuple[str, tuple[ClassKey, ...]]]:
        if self._direct is None:
            self._direct = _ordered_delegates(self._index.delegates(self._wrapper), self._preferred, self._only,
                                              self._marked(self._wrapper))
            self._forwarded = self._index.forwarded_attrs(self._wrapper)
        return self._direct

    def dispatched(self, member: str) -> tuple[str, tuple[ClassKey, ...], tuple[ClassKey, ...]] | None:
        """An attribute the class's ``__getattr__`` forwards to whose possible classes split on ``member`` (the
        dispatcher shape: ``self.minicpmv = _SUPPORT_VERSION[version](...)``): the attribute, the classes that
        have it and those that lack it. Which class it holds is the checkpoint's choice, made at run time."""
        for attr, candidates in self._read_direct():
            if attr not in self._forwarded or len(candidates) < 2:
                continue
            having = tuple(c for c in candidates if (found := self.provision(c, member)) is not None
                           and found.member is not None)
            if having and len(having) < len(candidates):
                return attr, having, tuple(c for c in candidates if c not in having)
        return None

    def provider(self, member: str) -> Inner | None:
        """The first delegate path whose inner class really defines ``member`` (not via unknown ``__getattr__``)."""
        if self._lacked(member):
            return None
        self._read_direct()
        assert self._direct is not None
        provided = []  # (attr, inner, provision) of the direct inners, asked once for both passes
        for attr, candidates in self._direct:
            for inner in candidates:
                found = self.provision(inner, member)
                # A ``__getattr__`` already forwards to this attribute, so the wrapper lacks the member only
                # because some candidate does: the forward to add goes one level deeper, past that candidate.
                if found is not None and found.member is not None and attr not in self._forwarded:
                    return Inner(attr, inner, found.owner, found.member)
                provided.append((attr, inner, found))
        # one level deeper: ``self.minicpmv.llm``; a class found lacking it is not asked again on another path
        lacking = {self._wrapper} | {inner for _, inner, found in provided if found is None or found.member is None}
        for attr, inner, found in provided:
            if found is not None:
                continue
            for sub_attr, sub_candidates in self._delegates_of(inner):
                for sub_inner in sub_candidates:
                    if sub_inner in lacking:
                        continue
                    found = self.provision(sub_inner, member)
                    if found is not None and found.member is not None:
                        return Inner(f"{attr}.{sub_attr}", sub_inner, found.owner, found.member)
                    lacking.add(sub_inner)
        return None


def takes(member: Member) -> str:
    """How many positional arguments a method takes, for messages ("1", "2 to 3", "1 or more")."""
    if member.max_args == member.min_args:
        return f"{member.min_args}"
    return f"{member.min_args} or more" if member.max_args is None else f"{member.min_args} to {member.max_args}"


def unfit_calls(sites: Iterable[CallSite], member: Member) -> list[CallSite]:
    """The calls among ``sites`` that pass a method a number of positional arguments it does not take: a
    forward to it would fail there as well (SGLang's CUDA-graph runner calls ``set_eagle3_layers_to_capture()``
    with no argument, which a decoder's version requires)."""
    if member.kind not in ("method", "async_method"):
        return []
    return [site for site in sites if site.is_call and site.arity is not None
            and (site.arity < member.min_args or member.max_args is not None and site.arity > member.max_args)]


class Broken(NamedTuple):
    """A member the class has by a body that hands it, untested, to ``self.<delegate>``, where every class that
    may be held lacks it (``inners``): a run that uses it dies inside that body."""

    delegate: str
    inners: tuple[ClassKey, ...]
    owner: ClassKey  # the class whose body it is: the class itself or a base
    member: Member


def landing(index: Index, key: ClassKey, path: str) -> tuple[ClassKey, ...] | None:
    """The classes ``self.<path>`` may hold on an instance of ``key`` (None: some step is not known here)."""
    holders: tuple[ClassKey, ...] = (key,)
    for attr in path.split("."):
        reached: list[ClassKey] = []
        for holder in holders:
            inners = index.delegates(holder).get(attr, ())
            if not inners:
                return None
            reached += [inner for inner in inners if inner not in reached]
        holders = tuple(reached)
    return holders


class MemberLookup:
    """What one class provides itself and what its inner models provide, asked once per member."""

    def __init__(self, index: Index, key: ClassKey, config: Config) -> None:
        self.index = index
        self.key = key
        self._inners = _Inners(index, key, config.delegate_names, config.restrict_delegates)
        self._own: dict[str, bool] = {}
        self._broken: dict[str, Broken | None] = {}
        self._inner: dict[str, Inner | None] = {}
        self._config_names: frozenset[str] | None = None  # see may_meet

    def provides(self, member: str) -> bool:
        found = self._own.get(member)
        if found is None:
            if "." in member:
                found = self._own[member] = self._holds(member)
            else:
                found = self._own[member] = self._inners.provision(self.key, member) is not None
        return found

    def _holds(self, member: str) -> bool:
        """A member of an inner model (``model.topk_indices_buffer``, see ``contract``): provided unless every class
        the attribute may hold is known, bases and all, and lacks it (a class without the attribute fails the
        attribute's own use, not this one)."""
        holder, _, rest = member.rpartition(".")
        held = landing(self.index, self.key, holder)
        if not held:
            return True
        return any(self.index.provision(c, rest) is not None or not self._known_bases(c) for c in held)

    def broken(self, member: str) -> Broken | None:
        """How the member the class has is a forward to nowhere (see :class:`Broken`); None when it is not: the
        class lacks it, its body is its own, or a class that may be held has it or is not known here (the
        class's own inner classes are followed: a subclass may build another than the base's forward expects)."""
        if member not in self._broken:
            self._broken[member] = self._find_broken(member)
        return self._broken[member]

    def _find_broken(self, member: str) -> Broken | None:
        index = self.index
        found = index.provision(self.key, member)
        if found is None or found.member is None or found.member.kind not in ("method", "async_method", "property"):
            return None
        owner = index.class_summary(found.owner)
        for forwarded, attr in owner.unguarded_forwards if owner is not None else ():
            inners = landing(index, self.key, attr) if forwarded == member else None
            if inners and all(index.provision(inner, member) is None and self._known_bases(inner) for inner in inners):
                return Broken(attr, inners, found.owner, found.member)
        return None

    def _known_bases(self, key: ClassKey) -> bool:
        """Whether every base along ``key``'s MRO is a class of the tree or torch's ``nn.Module`` (which has no
        contract member): a base from outside (transformers' ``PreTrainedModel`` has ``get_input_embeddings``)
        may provide what the tree does not show."""
        for owner in self.index.mro(key):
            cls = self.index.class_summary(owner)
            for base in cls.bases if cls is not None else ():
                if base[-1] not in ("Module", "object") and self.index.resolve_class(owner.module, base) is None:
                    return False
        return True

    def inner(self, member: str) -> Inner | None:
        if member not in self._inner:
            self._inner[member] = self._inners.provider(member)
        return self._inner[member]

    def dispatched(self, member: str) -> tuple[str, tuple[ClassKey, ...], tuple[ClassKey, ...]] | None:
        """See :meth:`_Inners.dispatched` (asked only of a member the class lacks)."""
        return self._inners.dispatched(member)

    def missing(self, member: str) -> Inner | None:
        """The inner model that defines a member the class lacks (None: the class has it, or no inner does).
        The class is asked first: a member it has costs no look into its inner models."""
        return None if self.provides(member) else self.inner(member)

    def state(self, member: str) -> MemberState | None:
        """The member's state on the class, None when neither the class nor an inner model has it."""
        provided = self.provides(member)
        inner = self.inner(member)
        if not provided:
            return None if inner is None else MemberState.MISSING
        return MemberState.PROVIDED if inner is None else MemberState.FORWARDED

    def known_inner(self, member: str) -> Inner:
        """The inner model of a member already found to have one (a finding's member, a fix's)."""
        found = self.inner(member)
        if found is None:
            raise LookupError(f"no inner model of {self.key.dotted} defines {member!r}")
        return found

    def provider(self, member: str) -> Provider:
        """Where the inner model gets the member from (for related information and the stub)."""
        inner = self.known_inner(member)
        return Provider(inner.owner.dotted, self.index.path_of(inner.owner.module) or "", inner.member.span,
                        inner.member.kind)

    def is_a(self, meets: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]) -> bool:
        """Whether the class is handed to a drafter so routed: for one pair, it is (or derives from) a class
        named in the first (``*``: any) and from none named in the second (see ``CallSite.only``)."""
        names = {key.qualname.rsplit(".", 1)[-1] for key in self.index.mro(self.key)}
        return any((yes == ("*",) or names & set(yes)) and not names & set(no) for yes, no in meets)

    def may_meet(self, site: CallSite) -> bool:
        """False when the class provably never meets the site's condition: an ``isinstance`` test for config
        classes that neither the class's config class (its ``__init__``'s ``config`` annotation) nor any of
        that class's bases is. Unknown configs may meet anything."""
        if not site.condition_classes:
            return True
        if self._config_names is None:
            self._config_names = self._find_config_names()
        return not self._config_names or bool(self._config_names & set(site.condition_classes))

    def _find_config_names(self) -> frozenset[str]:
        for owner in self.index.mro(self.key):
            cls = self.index.class_summary(owner)
            if cls is not None and cls.config is not None:
                config = self.index.resolve_class(owner.module, cls.config)
                if config is None:
                    return frozenset()
                return frozenset(k.qualname.rsplit(".", 1)[-1] for k in self.index.mro(config))
        return frozenset()
