"""What a start reaches in a graph given by its successors: the one worklist closure the contract's derivation
runs three times (aliases whose values may end in a watched name, the functions that run at start-up, and the
start-up calls a state guard's class makes)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

Node = TypeVar("Node")


def closure(starts: Iterable[Node], successors: Callable[[Node], Iterable[Node]]) -> set[Node]:
    """``starts`` and every node their successors lead to, at any depth; each node's successors are asked once,
    so a cycle ends."""
    found = set(starts)
    frontier = list(found)
    while frontier:
        for node in successors(frontier.pop()):
            if node not in found:
                found.add(node)
                frontier.append(node)
    return found
