"""The classes that can play a role (issue 20): every registered class, and every class that is the language
model of one, at any depth, though no entry-class list names it.

A worker never meets ``Qwen3_5ForCausalLM`` by its own name: the Qwen3.5 wrappers build it in
``self.model`` and forward the contract to it, so a member it lacks crashes the run as surely as one the
wrapper lacks. Its status belongs beside the wrapper's. A *language model* here is an inner class held in
one of the attributes a wrapper keeps its language model in (the profile's ``delegate_names``, or the
attributes the class itself marks as its language model) that holds a head of its own (``lm_head`` or
``logits_processor``), or to which the wrapper hands a contract member (``return
self.model.get_input_embeddings()``): a run that uses the member there needs it here. A decoder the class
only holds (``self.model = Qwen3Model(...)`` beside its own ``lm_head``, no member handed to it) is a part,
not a model a run is served by, and a vision tower is neither.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import ClassKey, Index

HEADS = ("lm_head", "logits_processor")
C = TypeVar("C")  # a class's check, as the check makes it  # what a language model holds and a decoder does not


@dataclass(frozen=True)
class RoleClass:
    """A class that can play a role, and why: registered itself, or the language model of ``wrapper``
    (held in ``self.<attr>`` there; ``attr`` is a dotted path when it is deeper, ``language_model.model``).
    ``handed``: when it holds no head, the contract members its holder hands it, the only ones a run asks
    of it there (empty: a registered class or a language model with its own head, asked the whole contract)."""

    key: ClassKey
    wrapper: ClassKey | None = None  # None: registered (an entry class or the registry names it)
    attr: str = ""
    handed: frozenset[str] = frozenset()

    @property
    def registered(self) -> bool:
        return self.wrapper is None


def language_models(index: Index, key: ClassKey, config: Config,
                    members: frozenset[str]) -> list[tuple[str, ClassKey, frozenset[str]]]:
    """``(attr, class, handed)`` for each language model ``key`` holds directly: a candidate class of a
    language-model attribute that holds a head of its own (``handed`` empty), or that ``key`` hands some of
    the contract's ``members`` to (those; see the module docstring)."""
    delegates = index.delegates(key)
    attrs = index.language_attrs(key) or tuple(a for a in config.delegate_names if a in delegates)
    handed: dict[str, set[str]] = {}
    for cls in (index.class_summary(owner) for owner in index.mro(key)):
        for member, path in cls.forwards if cls is not None else ():
            if member in members:
                handed.setdefault(path.partition(".")[0], set()).add(member)
    out: list[tuple[str, ClassKey, frozenset[str]]] = []
    for attr in attrs:
        for inner in delegates.get(attr, ()):
            if any(index.provision(inner, head) is not None for head in HEADS):
                out.append((attr, inner, frozenset()))
            elif attr in handed:
                out.append((attr, inner, frozenset(handed[attr])))
    return out


# holder → (the language models it holds directly, as :func:`language_models` finds them; the modules read for them)
Holds = dict[ClassKey, tuple[list[tuple[str, ClassKey, frozenset[str]]], frozenset[str]]]


def find_holds(index: Index, key: ClassKey, config: Config, members: frozenset[str],
               holds: Holds) -> list[ClassKey]:
    """Add to ``holds`` the language models ``key`` holds, and theirs, at any depth (each holder once);
    returns the holders added.

    A holder's models depend on the tree alone, not on who asks, so the holds of different classes can be
    found in different processes (a forked check finds those of the classes it checks) and put together."""
    added, pending = [], [key]
    while pending:
        holder = pending.pop()
        if holder in holds:
            continue
        recorded = index.record()
        models = language_models(index, holder, config, members)
        holds[holder] = (models, index.stop(recorded))
        added.append(holder)
        pending.extend(inner for _, inner, _ in models)
    return added


def role_classes(index: Index, registered: Iterable[ClassKey], config: Config,
                 members: Iterable[str] = (), holds: Holds | None = None,
                 others: frozenset[ClassKey] = frozenset()) -> tuple[RoleClass, ...]:
    """Every class that can play a role: the registered ones first, in their order, then each language model
    they hold at any depth, found breadth first (a class is listed once, with the first path that reaches
    it; a registered class is never listed again as a language model). ``members``: the contract's members
    (``Contract.members()``), for the forwards that make an inner class a language model. ``holds``: what
    is known already of what the classes hold (see :func:`find_holds`); what is not is found and added.
    ``others``: more registered classes, never listed or reached through (what ``registered`` alone would
    give the classes it holds, when the others are registered too)."""
    wanted = frozenset(members)
    holds = {} if holds is None else holds
    out: dict[ClassKey, RoleClass] = {key: RoleClass(key) for key in registered}
    pending = [(key, key, "") for key in out]
    while pending:
        wrapper, holder, path = pending.pop(0)
        if holder not in holds:
            find_holds(index, holder, config, wanted, holds)
        for attr, inner, handed in holds[holder][0]:
            if inner in out or inner in others:
                continue
            reached = f"{path}.{attr}" if path else attr
            out[inner] = RoleClass(inner, wrapper, reached, handed)
            pending.append((wrapper, inner, reached))
    return tuple(out.values())


@dataclass
class Holding(Generic[C]):
    """What the check of the registered classes finds they hold (``check.batch.check_classes``): each holder's
    language models (:func:`find_holds`), and the held classes checked in the role a registered class gives
    them when it reaches them first (:func:`role_classes` with it alone, the others never reached through:
    when the walk over all of them gives a held class that role, that check is its check)."""

    registered: frozenset[ClassKey]
    holds: Holds = field(default_factory=dict)
    checked: dict[RoleClass, C] = field(default_factory=dict)

    def settle(self, held: dict[ClassKey, RoleClass], keep: Callable[[ClassKey, C], None]) -> list[ClassKey]:
        """Keep the checks of the held classes made in their role; returns the others, still to check."""
        for key, role in held.items():
            if role in self.checked:
                keep(key, self.checked[role])
        return [key for key, role in held.items() if role not in self.checked]


class HeldModels:
    """The language models no registry names (the :func:`role_classes` not registered), kept with the modules
    they were read from and found again only when the classes checked, the contract's members or one of those
    modules changed: a run on an unchanged tree reads no summary. ``kept`` is what a results store saves."""

    def __init__(self) -> None:
        # ((classes checked, contract members), the held classes, the modules they were read from)
        self.kept: tuple[tuple[tuple[ClassKey, ...], frozenset[str]], dict[ClassKey, RoleClass],
                         frozenset[str]] | None = None
        self.unsaved = False

    def known(self, checked: Iterable[ClassKey], members: Iterable[str],
              changed: set[str]) -> dict[ClassKey, RoleClass] | None:
        """The held classes kept, when the classes checked, the contract's members and the modules they were
        read from are all unchanged; else None (:meth:`find` finds them)."""
        if self.kept is not None and self.kept[0] == (tuple(checked), frozenset(members)) \
                and not changed & self.kept[2]:
            self.unsaved = False
            return self.kept[1]
        return None

    def find(self, index: Index, checked: Iterable[ClassKey], config: Config, members: Iterable[str],
             holds: Holds) -> dict[ClassKey, RoleClass]:
        """The held classes, found from ``holds`` (what the check of the classes found they hold, see
        :func:`find_holds`) and what the rest hold (found here and added to it)."""
        keys = tuple(checked)
        asked = (keys, frozenset(members))
        held = {r.key: r for r in role_classes(index, keys, config, asked[1], holds) if not r.registered}
        read = {key.module for key in keys}
        for holder in (*keys, *held):
            read |= holds[holder][1]
        self.kept, self.unsaved = (asked, held, frozenset(read)), True
        return held

    def check(self, index: Index, checked: list[ClassKey], config: Config, members: Iterable[str],
              changed: set[str], check: Callable[[list[ClassKey], dict[ClassKey, RoleClass], Holding[C] | None], None],
              keep: Callable[[ClassKey, C], None]) -> dict[ClassKey, RoleClass]:
        """The held classes, with ``check`` run on the classes to check (and the held classes, their roles, a
        :class:`Holding` or None). Unless those kept are still right, the registered classes are checked first,
        finding (and checking) what they hold as they go, and the held classes they did not check right next;
        ``keep`` keeps the checks they did."""
        held = self.known(checked, members, changed)
        if held is not None:
            check(checked + list(held), held, None)
            return held
        holding: Holding[C] = Holding(frozenset(checked))
        check(checked, {}, holding)
        held = self.find(index, checked, config, members, holding.holds)
        check(holding.settle(held, keep), held, None)
        return held
