"""The modules a memoised answer read reach every recording open when it is used, however often it is used."""

from __future__ import annotations

from spec_contract.engine.resolve.recording import Recorder


def test_a_memo_hit_charges_its_modules_to_each_recording_once_merged_and_again_in_a_nested_one():
    recorder = Recorder()
    table: dict[str, tuple[int, frozenset[str]]] = {}

    def compute() -> int:
        recorder.read("a")
        recorder.read("b")
        return 1

    assert recorder.memoised(table, "k", compute) == 1  # computed outside any recording: kept with its modules
    outer = recorder.record()
    recorder.memoised(table, "k", compute)
    recorder.read("c")
    inner = recorder.record()  # a recording opened after the hit gets the modules too
    assert recorder.memoised(table, "k", compute) == 1
    assert recorder.stop(inner) == {"a", "b"}
    recorder.memoised(table, "k", compute)  # charged to the outer one already
    assert recorder.stop(outer) == {"a", "b", "c"}
    again = recorder.record()  # a new recording after the first stopped starts empty
    recorder.memoised(table, "k", compute)
    assert recorder.stop(again) == {"a", "b"}
