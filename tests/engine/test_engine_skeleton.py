"""A deferred class statement is read from its skeleton (the method bodies that add nothing left out): what it
gives must be what parsing the whole statement gives, the factories of skipped methods included (read when
asked for), on tricky shapes and on every class of this repository."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from engine_trees import WORKER, analyze, base_tree, findings
from spec_contract.engine.resolve.keys import ClassKey
from spec_contract.engine.summarise.deferred import factory, find_class
from spec_contract.engine.summarise.pieces import parse_deferred, piece_of
from spec_contract.engine.summarise.scan import scan
from spec_contract.engine.summarise.skeleton import skeleton
from spec_contract.engine.summarise.statements import parse_at
from spec_contract.engine.summarise.syntax import Lines

REPO = Path(__file__).resolve().parents[2]

# Each class has a method ``kept`` whose body adds to the summary in some hard-to-see way, beside ``plain``
# methods that add nothing (and are skipped)
SHAPES = {
    "tuple target first": "        self.a, b = f()\n",
    "tuple target in brackets over lines": "        (self.a,\n         b) = f()\n",
    "tuple target inside a nested tuple": "        (b, self.a), c = f()\n",
    "tuple target after a subscript with a string": "        d[\")\"], self.a, c = f()\n",
    "chained assignment": "        x = self.a = f()\n",
    "parenthesised self": "        (self).a = f()\n",
    "annotated after a one-line if": "        if c: self.a: int = f()\n",
    "annotated": "        self.a: Optional[Inner] = None\n",
    "spaces and a continuation": "        self \\\n            .a = f()\n",
    "a comment inside the target": "        (self  # why\n         ).a = f()\n",
    "a comment after the target": "        (self.a  # why\n         # and more\n         ) = f()\n",
    "a triple quote in a string": "        x = 'a\"\"\"'\n        self.a = 1\n        y = '\"\"\"b'\n",
    "a call of the same method up": "        return super().kept(x)\n",
    "a forward to the inner": "        return self.model.kept(x)\n",
    "an import": "        from .inner import Inner\n        return Inner()\n",
    "a marked language model": "        with self._mark_language_model(c):\n            self.lm = Inner()\n",
    "a non-ASCII self": "        s\u0435lf = 1\n        \uff53\uff45\uff4c\uff46.a = Inner()\n",
}
PLAIN = '''
    def plain(self, x, y=1):
        z = F.linear(x, self.weight, bias=self.bias)
        w = g(self.a, y=2)
        v = self.b  # a comment
        if self.training:
            return z
        return [self.a, w]

    @property
    def plain_property(self) -> Tuple[int, int]:
        """The model's pair."""
        return (self.a, 1)

    def plain_factory(self, config):
        model = Inner(config)
        return model
'''


def _class(kept_body: str) -> str:
    return f"from .inner import Inner\n\n\nclass Wrapper(Base):\n    def __init__(self):\n        pass\n{PLAIN}\n" \
           f"    def kept(self, x):\n{kept_body}\n{PLAIN.replace('plain', 'later')}\n"


def _whole(deferred, path):
    return piece_of(parse_at(deferred.text, deferred.first_line, path), Lines.of_statement(deferred), False, None,
                    deferred.text)


def _same_as_whole(summary, path: str) -> int:
    """Assert each deferred statement reads as the whole parse does; the number of statements with a skeleton."""
    skeletons = 0
    for deferred in summary.deferred:
        try:
            whole = _whole(deferred, path)
        except SyntaxError:
            continue
        read = parse_deferred(deferred, path)
        assert read.error is None and read.local_imports == whole.local_imports
        assert len(read.classes) == len(whole.classes)
        for got, expected in zip(read.classes, whole.classes):
            assert replace(got, factories=expected.factories, unread=()) == expected
            for name in {n for n, _ in expected.factories} | {m.name for m in got.unread}:
                assert factory(summary, got, name) == next((m for n, m in expected.factories if n == name), None)
        skeletons += skeleton(deferred.text, deferred.first_line) is not None
    return skeletons


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_class_read_from_its_skeleton_is_the_class_parsed_whole(name):
    text = _class(SHAPES[name])
    summary = scan("/t/m.py", "m", "d", text, worker=False, entry_variable=None)
    assert _same_as_whole(summary, "/t/m.py") == 1
    made = skeleton(summary.deferred[0].text, summary.deferred[0].first_line)
    assert made is not None
    assert sorted(skip.name for skip in made[1].values()) == [
        "later", "later_factory", "later_property", "plain", "plain_factory", "plain_property"]


def test_every_class_of_this_repository_reads_from_its_skeleton_as_whole():
    files = [p for folder in ("server", "tests", "benchmarks") for p in (REPO / folder).rglob("*.py")]
    skeletons = 0
    for path in files:
        summary = scan(str(path), "m", "d", path.read_text(encoding="utf-8"), worker=False, entry_variable=None)
        skeletons += _same_as_whole(summary, str(path))
    assert skeletons > 50


def test_a_factory_method_whose_body_is_skipped_still_builds_the_inner(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llava.py": """\
        from pkg.models.llama import LlamaForCausalLM


        class LlavaForConditionalGeneration:
            def __init__(self, config):
                self.language_model = self.build_language_model(config)

            def build_language_model(self, config):
                model = LlamaForCausalLM(config)
                return model

            def build_other(self, config):
                return LlamaForCausalLM(config)


        EntryClass = LlavaForConditionalGeneration
        """})
    analysis = analyze(root)
    cls = analysis.index.class_summary(ClassKey("pkg.models.llava", "LlavaForConditionalGeneration"))
    assert cls is not None and cls.factories == ()  # both bodies were left out …
    assert [m.name for m in cls.unread] == ["build_language_model", "build_other"]
    assert [(f[0], f[4], f[5]) for f in findings(analysis)] == [  # … and the one asked for was read
        ("SC001", "language_model", "LlamaForCausalLM"), ("SC005", "language_model", "LlamaForCausalLM")]
    assert all(site == WORKER for f in findings(analysis) for site, _, _ in f[7])


def test_a_method_with_an_import_is_parsed_and_binds_its_name():
    text = _class("        return 1\n").replace(
        "    def kept(self, x):\n", "    def kept(self, x):\n        from .llama import LlamaModel\n")
    summary = scan("/t/m.py", "m", "d", text, worker=False, entry_variable=None)
    read = parse_deferred(summary.deferred[0], "/t/m.py")
    assert [(b.name, b.module) for _, b in read.local_imports] == [("LlamaModel", "llama")]


def test_a_syntax_error_in_a_skipped_body_goes_unseen_and_one_elsewhere_is_reported():
    text = _class("        self.a = 1\n")
    unseen = scan("/t/m.py", "m", "d", text.replace("model = Inner(config)", "model = Inner(config"),
                  worker=False, entry_variable=None)
    assert find_class(unseen, "Wrapper") is not None and unseen.deferred_error() is None
    seen = scan("/t/m.py", "m", "d", text.replace("self.a = 1", "self.a = (1"), worker=False, entry_variable=None)
    assert find_class(seen, "Wrapper") is None and seen.deferred_error().startswith("SyntaxError")
    with pytest.raises(SyntaxError):
        ast.parse(text.replace("model = Inner(config)", "model = Inner(config"))
