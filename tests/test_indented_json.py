"""The machine formats' writer prints what ``json.dumps(value, indent=N)`` prints, byte for byte."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spec_contract.engine import Severity
from spec_contract.report.indented_json import dumps

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo"

leaves = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-2**80, max_value=2**80)
          | st.floats(allow_nan=True, allow_infinity=True) | st.text() | st.sampled_from(list(Severity)))
keys = st.text() | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                      | st.dictionaries(keys, inner, max_size=4), max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(values, st.sampled_from([0, 1, 2, 4]))
def test_any_json_value_is_written_as_the_standard_library_writes_it(value, indent):
    assert dumps(value, indent) == json.dumps(value, indent=indent)


def test_the_edges_are_the_standard_ones():
    for value in ({}, [], (), {"a": {}}, [[]], "", "\x00\u2028\ud800é\U0001f600\"\\", -0.0, 1e300, math.inf,
                  -math.inf, math.nan, 10**30, {2: 2, 1.5: 3, True: 4, False: 0, None: 5}, {Severity.ERROR: Severity.HINT}):
        assert dumps(value) == json.dumps(value, indent=1), value


def test_what_json_refuses_it_refuses_in_the_same_words():
    loop: list = []
    loop.append(loop)
    for value, error in (({"a": object()}, TypeError), ([{1, 2}], TypeError), ({(1, 2): 3}, TypeError),
                         (loop, ValueError)):
        with pytest.raises(error) as ours:
            dumps(value)
        with pytest.raises(error) as theirs:
            json.dumps(value, indent=1)
        assert str(ours.value) == str(theirs.value)


def test_a_real_report_is_the_standard_text(tmp_path):
    """``check --format json`` on the demo: its text is what the standard writer makes of the same data."""
    run = subprocess.run([sys.executable, "-m", "spec_contract", "check", str(DEMO), "--format", "json", "--no-cache"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    data = json.loads(run.stdout)
    assert data["findings"] and data["contract"]  # a report with something in it
    assert run.stdout == json.dumps(data, indent=1) + "\n"
