"""What the index answers with (classes, functions and modules by name; how a class provides a member), and
what its collaborators ask it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

from spec_contract.engine.summarise.summary import Chain, ClassSummary, Member, ModuleSummary

MAX_DEPTH = 12  # imports, re-exports and aliases followed before a name counts as unknown


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


class ClassReader(Protocol):
    """What the index's collaborators (:mod:`~spec_contract.engine.resolve.members`,
    :mod:`~spec_contract.engine.resolve.delegates`) ask it: the index implements this, and they never import it."""

    def summary(self, module: str) -> ModuleSummary | None: ...
    def class_summary(self, key: ClassKey) -> ClassSummary | None: ...
    def members_of(self, key: ClassKey) -> dict[str, Member]: ...
    def defines(self, key: ClassKey, name: str) -> Member | None: ...
    def resolve_class(self, module: str, chain: Chain) -> ClassKey | None: ...
    def engine_module(self, name: str) -> str: ...
    def platform_choices(self, module: str, name: str) -> tuple[ClassKey, ...]: ...
    def mro(self, key: ClassKey) -> tuple[ClassKey, ...]: ...
    def delegates(self, key: ClassKey) -> dict[str, tuple[ClassKey, ...]]: ...
