"""A model runner's default, as :mod:`~spec_contract.engine.resolve.runner_default` read it from the engine's
function, and that reading asked of one class (kept with the contract, which is why it stands alone here)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Test = tuple  # ("in", names, set name) | ("word", w) | ("!", t) | ("&", ...) | ("|", ...) | ("?",); ALWAYS: ("&",)
# a model-config word → what it is for the class (None: cannot tell), and that in words
Facts = Callable[[str], "tuple[bool | None, str]"]


@dataclass(frozen=True)
class RunnerDefault:
    """The function's reading: the tests that make it return False first, then the test it returns."""

    function: str  # its qualname, as said in messages
    refusing: tuple[Test, ...]
    returned: Test

    def runs_v2(self, architectures: frozenset[str], facts: Facts) -> tuple[bool | None, str]:
        """Whether the class's runs default to the V2 runner (None: cannot tell), and why, in words."""
        judge = _Judge(architectures, facts, self.function)
        for test in self.refusing:
            fired = judge.value(test)
            if fired is not False:
                return (False if fired else None), judge.words(test, fired)
        found = judge.value(self.returned)
        return found, judge.words(self.returned, found)


class _Judge:
    """A reading's tests, asked of one class: its architectures, and what the check says of the config's words."""

    def __init__(self, architectures: frozenset[str], facts: Facts, function: str) -> None:
        self._architectures = architectures
        self._facts = facts
        self._function = function

    def value(self, test: Test) -> bool | None:
        kind = test[0]
        if kind == "in":
            return bool(self._architectures & test[1])
        if kind == "word":
            return self._facts(test[1])[0]
        if kind == "!":
            inner = self.value(test[1])
            return None if inner is None else not inner
        if kind in ("&", "|"):
            values = [self.value(part) for part in test[1:]]
            decisive = kind == "|"  # a true part decides an ``or``, a false one an ``and``
            if decisive in values:
                return decisive
            return None if None in values else not decisive
        return None

    def words(self, test: Test, value: bool | None) -> str:
        """What made ``test`` come out ``value``, in words: the part that decided it."""
        kind = test[0]
        if value is None or kind == "?":
            return f"whether `{self._function}` picks the V2 model runner for it cannot be told here"
        if kind == "in":
            return (f"one of its architectures is in `{test[2]}`" if value
                    else f"none of its architectures is in `{test[2]}`")
        if kind == "word":
            return self._facts(test[1])[1]
        if kind == "!":
            return self.words(test[1], not value)
        if kind in ("&", "|"):
            parts = test[1:]
            if value is (kind == "|"):  # one part decided it
                parts = tuple(p for p in parts if self.value(p) is value)[:1]
            said = [self.words(p, value) for p in parts if p[0] != "&" or len(p) > 1]
            return " and ".join(dict.fromkeys(said)) or f"`{self._function}` says so"
        return f"`{self._function}` says so"
