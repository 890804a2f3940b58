"""The records a scan makes without their frozen ``__init__`` (spans, uses: by the ten thousand, at a third of
the cost) are the records ``__init__`` makes: every field set, in field order, equal, hashed and pickled alike.

A field added to ``Use`` or ``Span`` that the fast path does not fill fails here, not as a missing attribute in a
check far from the scan."""

from __future__ import annotations

import ast
import pickle
from dataclasses import fields, replace

from spec_contract.engine.results import Span
from spec_contract.engine.summarise.flow import function_flow
from spec_contract.engine.summarise.summary import Use
from spec_contract.engine.summarise.syntax import Lines

WORKER = '''
class Worker:
    def run(self, batch):
        model = getattr(self.target, "model", None)
        if model is None:
            raise ValueError("no model")
        head = getattr(self.target, "lm_head", None)
        self.draft.lm_head = head
        self.target.model.forward(batch)
        return self.draft.model.embed(batch.ids)
'''


def _same(made, kind) -> None:
    names = [f.name for f in fields(kind)]
    assert list(vars(made)) == names  # every field, in order (what pickling and ``repr`` read)
    rebuilt = kind(**{name: getattr(made, name) for name in names})
    assert made == rebuilt and hash(made) == hash(rebuilt) and repr(made) == repr(rebuilt)
    assert pickle.dumps(made) == pickle.dumps(rebuilt)


def test_uses_and_spans_made_fast_are_the_records_init_makes():
    for text in (WORKER, WORKER.replace("batch", "bätch")):  # ASCII spans, and spans read from the lines
        node = ast.parse(text).body[0].body[0]
        flow = function_flow(node, "Worker.run", "Worker", Lines(text))
        kinds = {(u.member, u.guarded, u.gate, u.shared, u.statement) for u in flow.uses}
        # made, then changed: an optional read turned into a gate, a shared one, a call made as a statement
        assert ("model", False, ("model",), False, False) in kinds and ("lm_head", True, (), True, False) in kinds and ("forward", False, (), False, True) in kinds
        for use in flow.uses:
            _same(use, Use)
            _same(use.span, Span)
            assert replace(use, text="x") == replace(Use(**vars(use)), text="x")
