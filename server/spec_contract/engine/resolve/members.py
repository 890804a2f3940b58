"""Class MROs and what each class provides: its own members, its bases', and what a ``__getattr__`` forwards.

Bases from outside the tree resolve to nothing and provide nothing; inheritance cycles are cut. Every
answer is memoised with the modules it read (see :mod:`~spec_contract.engine.resolve.recording`).
"""

from __future__ import annotations

import weakref

from spec_contract.engine.resolve.keys import MAX_DEPTH, ClassKey, ClassReader, Provision
from spec_contract.engine.resolve.recording import Recorder
from spec_contract.engine.summarise.deferred import Unread, unread
from spec_contract.engine.summarise.summary import REGISTRY, Chain, Member

Forwards = tuple[tuple[ClassKey, str], ...]  # the MRO's ``__getattr__`` owners and what each forwards to


class Hierarchy:
    """MROs and provisions, read through the index (``reader``) and memoised in its ``recorder``."""

    def __init__(self, reader: ClassReader, recorder: Recorder) -> None:
        # The index owns this and is asked back weakly: holding each other, the two would be a reference cycle,
        # and an analysis's index, frozen with it (``pipeline._collector_paused``), would never be freed
        self._reader = weakref.proxy(reader)
        self._recorder = weakref.proxy(recorder)
        self._mro: dict[ClassKey, tuple[tuple[ClassKey, ...], frozenset[str]]] = {}
        self._provisions: dict[tuple[ClassKey, str], tuple[Provision | None, frozenset[str]]] = {}
        self._forwarding: dict[ClassKey, tuple[Forwards, frozenset[str]]] = {}
        self._names: dict[ClassKey, tuple[frozenset[str] | None, frozenset[str]]] = {}
        self._unread: dict[ClassKey, Unread | None] = {}
        self._cuts = 0  # inheritance walks cut short so far (see ``_mro_of``)

    def defines(self, key: ClassKey, name: str) -> Member | None:
        """The member ``name`` the class's own body defines (see ``Index.members_of``), parsing the class only
        when its text holds the name."""
        found = self._unread_class(key)
        if found is not None and name not in found.words:
            return None
        return self._reader.members_of(key).get(name)

    def _bases_written(self, key: ClassKey) -> tuple[Chain, ...]:
        """The bases the class statement names, as written (read from its header while its body is unparsed)."""
        found = self._unread_class(key)
        if found is not None:
            return found.bases
        cls = self._reader.class_summary(key)
        return cls.bases if cls is not None else ()

    def _unread_class(self, key: ClassKey) -> Unread | None:
        summary = self._reader.summary(key.module)  # recorded, as a parse would be
        if summary is None:
            return None
        if key not in self._unread:
            self._unread[key] = unread(summary, key.qualname)
        return self._unread[key]

    def bases(self, key: ClassKey) -> tuple[ClassKey, ...]:
        out = []
        for base in self._bases_written(key):
            resolved = self._reader.resolve_class(key.module, base)
            if resolved is not None and resolved != key:
                out.append(resolved)
        return tuple(out)

    def mro(self, key: ClassKey) -> tuple[ClassKey, ...]:
        """C3 linearisation over the bases the index can resolve; cycles and conflicts degrade gracefully."""
        return self._mro_of(key, frozenset())

    def _mro_of(self, key: ClassKey, active: frozenset[ClassKey]) -> tuple[ClassKey, ...]:
        """The MRO of ``key``, met inside the walk through ``active`` when that is not empty. An answer the walk had
        to cut short under it (a cycle through ``active``, or past the depth) holds for this path only, and is not
        memoised. Every other answer is the one the class's own walk gives, and is memoised as that one is: a base
        is walked once, not once per path to it (a ladder of diamonds, ``class A2(A1, B1)``, ``class B2(A1, B1)``,
        …, has 2**n paths to its root)."""
        cuts = self._cuts
        found = self._recorder.memoised(self._mro, key, self._compute_mro, key, active)
        if active and self._cuts != cuts:
            del self._mro[key]
        return found

    def _compute_mro(self, key: ClassKey, active: frozenset[ClassKey]) -> tuple[ClassKey, ...]:
        if key in active or len(active) > MAX_DEPTH * 4:  # an inheritance cycle: cut it here
            self._cuts += 1
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
        return tuple(result)

    def provision(self, key: ClassKey, member: str) -> Provision | None:
        """Whether instances of ``key`` have ``member``: own body, bases, or a forwarding ``__getattr__``.

        Memoised: a popular inner model is asked about every contract member per wrapper. A member outside
        the class's :meth:`names` is lacking without a memo of its own (it read the same modules)."""
        names = self.names(key)
        if names is not None and member not in names:
            return None
        return self._recorder.memoised(self._provisions, (key, member), self._provision, key, member, 1)

    def names(self, key: ClassKey) -> frozenset[str] | None:
        """Every name the bodies along the class's MRO may define (a class still unparsed counts each word of
        its text), so a member outside it is provided by none of them; None when a ``__getattr__`` along the
        MRO forwards, and any name may be provided.

        One set per class, read once: the look for an inner model asks each candidate about every contract
        member, and most lack most (a set membership instead of a memoised provision per class and member).
        It reads the modules of the MRO, as a provision found lacking does."""
        return self._recorder.memoised(self._names, key, self._names_of, key)

    def _names_of(self, key: ClassKey) -> frozenset[str] | None:
        if self._forwards(key):
            return None
        found: set[str] = set()
        for owner in self.mro(key):
            text = self._unread_class(owner)
            found.update(text.words if text is not None else self._reader.members_of(owner))
        return frozenset(found)

    def _provision(self, key: ClassKey, member: str, depth: int) -> Provision | None:
        for owner in self.mro(key):  # the first class along the MRO whose body defines it
            own = self.defines(owner, member)
            if own is not None:
                return Provision(owner, own)
        if depth > 4:
            return None
        for owner, forward in self._forwards(key):
            if forward == "":
                return Provision(owner, None)
            inners = self._reader.delegates(key).get(forward, ())
            if not inners:
                return Provision(owner, None)  # forwards to an object of unknown class
            # The object may be of any of the candidate classes: the member is there only if each has it.
            found = [self._provision(inner, member, depth + 1) for inner in inners]  # depth bounds the recursion
            if all(f is not None for f in found):
                return found[0]
        return None

    def _forwards(self, key: ClassKey) -> Forwards:
        """The MRO's classes with a ``__getattr__`` (owner, what it forwards to), in MRO order; a class whose
        text never names ``__getattr__`` is not parsed for it.

        Built once per class: provisions are asked for every contract member of every wrapper and inner
        model. Computing the MRO already read every class in it, so this reads no module the walk would not.
        """
        return self._recorder.memoised(self._forwarding, key, self._forwards_of, key)

    def _forwards_of(self, key: ClassKey) -> Forwards:
        forwards = []
        for owner in self.mro(key):
            if self.defines(owner, "__getattr__") is None:
                continue
            cls = self._reader.class_summary(owner)
            if cls is not None and cls.getattr_forward is not None:
                forwards.append((owner, cls.getattr_forward))
        return tuple(forwards)

    def forwarded_attrs(self, key: ClassKey) -> frozenset[str]:
        """The attributes a ``__getattr__`` in the class's MRO forwards unknown names to."""
        return frozenset(forward for _, forward in self._forwards(key) if forward)

    def language_attrs(self, key: ClassKey) -> tuple[str, ...]:
        """The attributes a class of the MRO marks as its language model (``_mark_language_model`` blocks)."""
        found: list[str] = []
        for owner in self.mro(key):
            cls = self._reader.class_summary(owner)
            found += [a for a in (cls.language_attrs if cls else ()) if a not in found]
        return tuple(found)

    def registry_chosen(self, key: ClassKey, attr: str) -> bool:
        """Whether ``self.<attr>`` is built from a class the model registry picks (candidates from the profile)."""
        for owner in self.mro(key):
            cls = self._reader.class_summary(owner)
            if cls is not None and any(d.attr == attr and d.callee == REGISTRY for d in cls.delegates):
                return True
        return False
