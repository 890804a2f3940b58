"""The speculative algorithms this engine runs, as SGLang names them (a launch's --speculative-algorithm)."""

from enum import Enum, auto


class SpeculativeAlgorithm(Enum):
    EAGLE = auto()
    EAGLE3 = auto()
    NONE = auto()

    def is_eagle(self):
        return self in (SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3)

    def is_eagle3(self):
        return self == SpeculativeAlgorithm.EAGLE3
