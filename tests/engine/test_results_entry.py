"""The saved results of a run load as what was saved, each equal call site and provider once.

A run's findings carry copies of the same few call sites and providers (one per class found lacking the
member); the results entry pickles each value once, so a warm run loads far fewer objects.
"""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path

from spec_contract.engine.cache import RESULT_KEYS, SummaryCache, decode_entry
from spec_contract.engine.results import CallSite, Provider, Role, Span


def test_equal_call_sites_and_providers_are_saved_once_and_load_as_one_object(tmp_path: Path):
    site = CallSite("/w/worker.py", Span(3, 4, 3, 20), Role.TARGET, "get_embed_and_head",
                    "return model.get_embed_and_head()", guarded=False, is_call=True)
    other = replace(site, span=Span(9, 4, 9, 20))
    provider = Provider("pkg.models.a.A", "/w/a.py", Span(1, 8, 1, 26), "method")
    # per class, fresh copies: equal values, distinct objects (as a cold run makes them)
    findings = [(replace(site), replace(other), replace(provider)) for _ in range(50)]
    saved = {key: None for key in RESULT_KEYS} | {"checked": findings}
    cache = SummaryCache(tmp_path)
    cache.put_results("k", saved)

    entry = next(tmp_path.rglob("*.pickle")).read_bytes()
    loaded = cache.get_results("k")
    assert loaded == saved and loaded == decode_entry(entry)
    rows = loaded["checked"]
    assert all(row[0] is rows[0][0] and row[1] is rows[0][1] and row[2] is rows[0][2] for row in rows)
    assert rows[0][0] is not rows[0][1]  # only equal values are shared
    assert len(entry) < len(pickle.dumps(saved, protocol=pickle.HIGHEST_PROTOCOL)) / 3
