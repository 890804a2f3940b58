"""The worklist closure the contract's derivation shares (aliases, start-up calls, state guards)."""

from __future__ import annotations

from collections import Counter

from spec_contract.engine.reach import closure


def test_reaches_at_any_depth_and_keeps_the_starts():
    graph = {"a": ["b"], "b": ["c"], "c": [], "d": ["a"], "e": []}
    assert closure({"a", "e"}, lambda n: graph[n]) == {"a", "b", "c", "e"}


def test_a_cycle_ends_and_each_node_is_asked_once():
    graph = {1: [2], 2: [3, 1], 3: [1, 2]}
    asked: Counter[int] = Counter()

    def successors(node: int) -> list[int]:
        asked[node] += 1
        return graph[node]

    assert closure([1], successors) == {1, 2, 3}
    assert asked == Counter({1: 1, 2: 1, 3: 1})


def test_no_start_reaches_nothing():
    assert closure([], lambda n: [n + 1]) == set()
