"""State guards: attributes of a worker that only a test of a model sets, so that a later test of the attribute,
in any method, is that test of the model.

vLLM's speculators set ``self._local = getattr(self.model, "compute_local", None)`` while loading and sample
``if self._local is not None:`` on every step; the read of ``self.model.logits_processor`` under it meets only
drafts with ``compute_local``. The attribute may be set in a subclass and tested in a method the base defines:
what the test means is then decided per class that runs the method, not by the class that wrote it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Set

from spec_contract.engine.reach import closure
from spec_contract.engine.resolve.index import ClassKey, FunctionKey, Index
from spec_contract.engine.results import Role
from spec_contract.engine.summarise.deferred import unread
from spec_contract.engine.summarise.selectors import Formula, Selects, held_as
from spec_contract.engine.summarise.selectors import held as holds
from spec_contract.engine.summarise.summary import NEVER_TRUE, CallFlow, FunctionFlow

Guard = tuple[str, frozenset[Role]]  # the member a test asks for (``a+b``: each), the roles of the model it asks
# Per worker class, attribute → its guard; ``UNGUARDED`` when some value it is given may be true without such a test
# (or the class body gives it a value); None when the class (its bases included) only ever gives it a falsy
# constant: a test of it is never true on that class's instances. An attribute a class never gives a value is
# not there: its tests are not true on the class's instances either, short of code outside the workers.
StateGuards = dict[ClassKey, dict[str, Guard | None]]
UNGUARDED: Guard = ("", frozenset())
Guarding = Callable[[FunctionKey], dict[str, Guard]]
# a worker function → its locals that may stand for guarded attributes → the formulas of their values (see
# ``local_values``)
LocalValues = Callable[[FunctionKey], Mapping[str, tuple[Formula | None, ...]]]


def state_guards(functions: Mapping[FunctionKey, FunctionFlow], index: Index,
                 classes: Mapping[FunctionKey, ClassKey | None],
                 models: Callable[[FunctionKey, str], frozenset[Role]],
                 held: frozenset[str] = frozenset(),
                 vouched: Callable[[FunctionKey, str], tuple[str, str]] = lambda key, called: ("", "")
                 ) -> StateGuards:
    """Per worker class, the attributes of its instances that only a test of a model sets: attribute → the member
    that test asks for and the roles of the model it asks, when every assignment of a value that may be true to the
    attribute in the class (its bases included) stands behind a test of that member on a model of those roles
    (``self._local = hasattr(self.model, "m")``, ``getattr(self.model, "m", None)``, or ``self._local = …`` under
    ``if hasattr(self.model, "m"):``; ``models``: the roles of the model an object, as written in a function, is);
    None for an attribute the class gives only falsy constants (``self._local = None``). A test of another object
    (``getattr(hf_config, "m", False)``) says nothing of the model. A test of the model's own inner model
    (``hasattr(draft_model.model, "m")``, an attribute ``held`` names) asks for ``model.m``; ``a+b``: every member
    an ``and`` of tests asks of one object. An attribute set from a call's value stands behind the test the callee
    makes of an argument before it returns anything true (``vouched``: SGLang's
    ``_configure_target_hidden_projection`` returns False unless ``isinstance(target_model, P)``): member ``*``,
    any, is the use's own (see ``CallSite.requires``)."""
    own: dict[ClassKey, dict[str, set[Guard | None]]] = {}
    for key, fn in functions.items():
        cls = classes[key]
        if cls is not None and fn.states:
            found = own.setdefault(cls, {})
            for attr, member, tested in fn.states:
                if member == NEVER_TRUE:
                    found.setdefault(attr, set()).add(None)
                    continue
                if member.startswith("()"):  # set from a call's value: what the callee's own test holds
                    member, tested = vouched(key, member[2:])
                roles = models(key, tested) if member else frozenset()
                holder, _, name = tested.rpartition(".")
                if member and not roles and holder and name in held:
                    # a test of the model's own inner model (``hasattr(draft_model.model, "m")``): of ``model.m``
                    roles = models(key, holder)
                    member = "+".join(f"{name}.{m}" for m in member.split("+")) if roles else member
                found.setdefault(attr, set()).add((member, roles))
    out: StateGuards = {}
    for cls in {c for c in classes.values() if c is not None}:
        merged: dict[str, set[Guard | None]] = {}
        for owner in index.mro(cls):
            for attr, given in own.get(owner, {}).items():
                merged.setdefault(attr, set()).update(given)
        guarded: dict[str, Guard | None] = {}
        for attr, values in merged.items():
            tests = [guard for guard in values if guard is not None]
            members = {asked for asked, _ in tests}
            common = frozenset.intersection(*(of for _, of in tests)) if tests else frozenset()
            guarded[attr] = None if not tests else (next(iter(members)), common) \
                if len(members) == 1 and "" not in members and common else UNGUARDED
        if guarded:
            out[cls] = guarded
    # ``_local = None`` in a class body: a value this analysis does not follow, so a test of the attribute may be
    # true on the class's instances (asked only of the attributes some class holds a guard on)
    named = {attr for found in out.values() for attr, guard in found.items() if guard and guard[0]}
    for cls in {c for c in classes.values() if c is not None} if named else ():
        for owner in index.mro(cls):
            module = index.summary(owner.module)
            unread_words = unread(module, owner.qualname) if module is not None else None
            if unread_words is not None and not named & unread_words.words:
                continue  # its text names none of them: not parsed for this
            summary = index.class_summary(owner)
            for defined in summary.members if summary is not None else ():
                if defined.kind == "class_attribute" and defined.name in named:
                    out.setdefault(cls, {}).setdefault(defined.name, UNGUARDED)
    return out


def validated_flags(guards: StateGuards, functions: Mapping[FunctionKey, FunctionFlow],
                    methods: Mapping[ClassKey, list[FunctionKey]], start_up: Set[FunctionKey],
                    models: Callable[[FunctionKey, str], frozenset[Role]],
                    calls_into: Mapping[FunctionKey, list[tuple[FunctionKey, CallFlow]]],
                    entry: Callable[[FunctionKey], bool]) -> StateGuards:
    """Per worker class, the flags a check its instances run at start-up validates: vLLM's proposer copies
    ``use_local_argmax_reduction`` from the config, and its ``load_model`` raises unless the draft has
    ``get_top_tokens`` when the flag is on, so a later ``if self.use_local_argmax_reduction:`` runs only with a
    draft that has it (the launch was refused otherwise). From the checks of ``FunctionFlow.validates``, for a flag
    no method the instances run after start-up assigns. A class whose instances run no such check (one that
    overrides the checking method: vLLM's ``DraftModelProposer`` makes ``_maybe_share_lm_head`` a no-op) is
    ``UNGUARDED``, so a method both run stands behind nothing; one that only ever makes the flag false agrees
    (None, as its state guards say). Unlike a state guard, a flag so validated still decides whether the line runs
    at all: it only adds what the model must have where it is true, and only after start-up (a use before the
    check is not past it)."""
    found: dict[ClassKey, dict[str, set[Guard]]] = {}
    if not any(functions[key].validates for key in start_up if key in functions):
        return {}  # most releases check no flag: nothing to follow per class
    called: dict[FunctionKey, list[FunctionKey]] = {}  # a caller → the start-up functions it calls
    for callee, calls in calls_into.items():
        if callee in start_up:
            for caller, _ in calls:
                called.setdefault(caller, []).append(callee)
    for cls, run in methods.items():
        late = {attr for key in run if key not in start_up for attr, _, _ in functions[key].states}
        started = _started(run, start_up, calls_into, called, entry)
        for key in (key for key in run if key in started):  # its own: an override of a check runs instead
                for word, member, tested in functions[key].validates:
                    if word not in late and (roles := models(key, tested)):
                        found.setdefault(cls, {}).setdefault(word, set()).add((member, roles))
    words = {word for flags in found.values() for word in flags}
    if not words:
        return {}
    out: StateGuards = {}
    for cls in methods:
        mine, validated = guards.get(cls, {}), found.get(cls, {})
        # one check per flag: two (of other members, or of other models) stand for no one guard
        out[cls] = {word: None if word in mine and mine[word] is None else
                    next(iter(validated[word])) if len(validated.get(word, ())) == 1 else UNGUARDED
                    for word in words}
    return out


def _started(run: list[FunctionKey], start_up: Set[FunctionKey],
             calls_into: Mapping[FunctionKey, list[tuple[FunctionKey, CallFlow]]],
             called: Mapping[FunctionKey, list[FunctionKey]], entry: Callable[[FunctionKey], bool]) -> set[FunctionKey]:
    """The start-up functions an instance that runs ``run`` reaches: from its own start-up methods (``entry``: by
    the profile's names) that none of its methods calls (the engine does), through the calls they make
    (``called``; ``super().load_model(…)`` included). A subclass whose ``load_model`` does not call the base's
    never reaches the checks the base's makes."""
    mine = set(run)
    starts = {key for key in run if key in start_up and entry(key)
              and not any(caller in mine for caller, _ in calls_into.get(key, ()))}
    return closure(starts, lambda key: called.get(key, ()))


def guards_of(guards: StateGuards, classes: Mapping[FunctionKey, ClassKey | None],
              methods: Mapping[ClassKey, list[FunctionKey]],
              calls_into: Mapping[FunctionKey, list[tuple[FunctionKey, CallFlow]]]) -> Guarding:
    """The state guards a worker function's tests of attributes mean (see ``state_guards``). For a method: those
    every worker class that runs it agrees on (its own class and each subclass that does not override it), a
    class that never makes the attribute true agreeing with any (vLLM's base speculator tests ``self._local``,
    which only its DSPARK subclass sets from a test of the draft). For a module function: those every calling
    method agrees on (``_gather_local(self.model, h)``, called under ``if self._local:``, is entered past the
    callers' test). ``methods``: the worker methods each worker class's instances run."""
    runners: dict[FunctionKey, list[ClassKey]] = {}  # a method → the worker classes whose instances run it
    for cls, run in methods.items():
        for key in run:
            runners.setdefault(key, []).append(cls)
    # per class, the attributes it holds a guard on: read once, not once per method its instances run
    named = {cls: {word for word, guard in found.items() if guard and guard[0]} for cls, found in guards.items()}
    memo: dict[FunctionKey, dict[str, Guard]] = {}

    def of_method(key: FunctionKey) -> dict[str, Guard]:  # remembered: a module function asks it per caller
        out = memo.get(key)
        if out is None:
            classes_running = runners.get(key, ())
            each = [guards.get(cls, {}) for cls in classes_running]
            out = memo[key] = {}
            for word in set().union(*(named.get(cls, ()) for cls in classes_running)):
                agreed = {guard for found in each if (guard := found.get(word)) is not None}
                if len(agreed) == 1:
                    out[word] = next(iter(agreed))
        return out

    def of(key: FunctionKey) -> dict[str, Guard]:  # not recursive: a closure that calls itself is a cycle
        if classes[key] is not None:
            return of_method(key)
        found = memo.get(key)
        if found is None:
            each = [of_method(caller) if classes[caller] is not None else {}
                    for caller in {caller for caller, _ in calls_into.get(key, ())}]
            found = memo[key] = {word: guard for word, guard in each[0].items()
                                 if all(other.get(word) == guard for other in each[1:])} if each else {}
        return found
    return of


def local_values(guards: StateGuards, functions: Mapping[FunctionKey, FunctionFlow]) -> LocalValues:
    """The locals of a worker function that may stand for guarded attributes, each with the formulas of every
    value the function gives it that may be true (None: a value no test is, ``n = compute()``; ``FunctionFlow.flags``
    leaves out the falsy constants, which reach no use under a test of the local). A parameter is left out (a caller
    may pass any value), and so is a name some worker class gives an attribute: a test of it may be of the
    attribute."""
    attributes = {attr for found in guards.values() for attr in found}
    memo: dict[FunctionKey, dict[str, tuple[Formula | None, ...]]] = {}

    def of(key: FunctionKey) -> dict[str, tuple[Formula | None, ...]]:
        found = memo.get(key)
        if found is None:
            fn, given = functions[key], dict[str, list[Formula | None]]()
            for name, formula, _ in fn.flags:
                if name not in attributes and name not in fn.params and name not in fn.kwonly:
                    given.setdefault(name, []).append(formula)
            memo[key] = found = {name: tuple(values) for name, values in given.items()}
        return found
    return of


def through_locals(guarding: Guarding, values: LocalValues) -> Callable[[FunctionKey, frozenset[str]],
                                                                        frozenset[str]]:
    """The names of the tests a line of a function runs past (``taken``), with the guarded attributes its locals
    stand for: a local the function gives only values that hold the attribute true (the words its formula holds,
    see ``selectors.held``; ``values``: see ``local_values``) is a test of it, so past ``if use_local:`` after
    ``use_local = self._local is not None and n > 0``, ``_local`` is set, in the function and in the helpers it
    calls there. What a local given an ``or`` of states needs is read from its formulas instead (``required_past``).
    """
    memo: dict[FunctionKey, dict[str, set[str]]] = {}

    def stand_ins(key: FunctionKey) -> dict[str, set[str]]:
        found = memo.get(key)
        if found is None:
            guarded, meant = guarding(key), dict[str, set[str]]()
            for name, formulas in values(key).items() if guarded else ():
                for formula in formulas:
                    held = {word for word in holds(formula) if word in guarded} if formula is not None else set()
                    meant[name] = meant[name] & held if name in meant else held
            memo[key] = found = {name: held for name, held in meant.items() if held}
        return found

    def expanded(key: FunctionKey, taken: frozenset[str]) -> frozenset[str]:
        if not taken:
            return taken
        local = stand_ins(key)
        return taken.union(*(local[word] for word in taken if word in local)) if local else taken
    return expanded


def required(guarded: dict[str, Guard], taken: frozenset[str], role: Role) -> tuple[str, ...]:
    """The members a use of the ``role`` model past the tests ``taken`` needs that model to have, by the state
    guards of its function (``guarded``, see ``guards_of`` and ``CallSite.requires``)."""
    if not guarded:
        return ()
    return tuple(sorted({member for word in taken if word in guarded and role in guarded[word][1]
                         for member in guarded[word][0].split("+")}))


def required_past(guarded: dict[str, Guard], selects: Selects, role: Role,
                  values: Mapping[str, tuple[Formula | None, ...]]) -> tuple[str, ...]:
    """The members a use of the ``role`` model past the tests ``selects`` needs that model to have, read per word
    before the tests' ``or``s meet (``selectors.held_as``): a word needs what its state guard asks, an ``and`` what
    any operand needs, an ``or`` what every operand needs. Read from the words the tests hold instead, ``if
    self._local is not None or self._local_fn is not None:`` needs nothing, as the two words differ, though each is
    set only behind a test of the same member: every run past it passed that test. An operand that is no guarded
    state (``or n > 0``) needs nothing, and so does the ``or``.

    A local of the function the tests are written in (``values``, see ``local_values``) needs what every value it
    is given needs, each formula read the same way: ``use_local = self._local is not None or self._local_fn is not
    None`` then ``if use_local:`` is that test written in place, though the local holds neither word (so
    ``through_locals`` gives it none), and a second value ``use_local = n > 0`` makes it need nothing. A local
    whose formula names itself, or a local naming it back, needs nothing through that name (it is being read)."""
    if not guarded:
        return ()
    reading: set[str] = set()  # the locals whose formulas are being read: a cycle stands for no test
    # each local read once: ``v1 = v0 and v0``, ``v2 = v1 and v1``, … would otherwise be read 2**n times (what a
    # local read inside a cycle needs is the cut's, never more than without it: the cut only loses requirements)
    read: dict[str, frozenset[str]] = {}

    def needs(word: str) -> frozenset[str]:
        formulas = values.get(word)
        if formulas is None:
            return frozenset(required(guarded, frozenset((word,)), role))
        if word in read:
            return read[word]
        if word in reading:
            return frozenset()
        reading.add(word)
        try:
            found = read[word] = frozenset.intersection(*(held_as(formula, needs) if formula is not None
                                                          else frozenset() for formula in formulas))
            return found
        finally:
            reading.discard(word)
    return tuple(sorted(frozenset().union(*(held_as(f, needs) for f in selects))))
