"""Scanning a file one top-level statement at a time gives what scanning it whole gives, and reuses the rest.

The scanner splits a file's text into top-level statements before parsing, so that an editor keystroke
re-parses only the statement it touched. These tests hold the split to the parser: on text built to mislead
a line-based split, and on every Python file of this repository, the statements parsed piece by piece must
be the whole file's statements, with the same line and column numbers.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from spec_contract.engine.summarise import classes as classes_module
from spec_contract.engine.summarise import scan as scan_module
from spec_contract.engine.summarise import statements as statements_module
from spec_contract.engine.summarise.deferred import all_classes, factory, find_class, local_import, top_level_classes
from spec_contract.engine.summarise.scan import StatementMemo, scan
from spec_contract.engine.summarise.statements import parse_by_member, top_level

REPO = Path(__file__).resolve().parents[2]

MISLEADING = {
    "docstring with code at column 0": 'x = 1\n"""\nclass Fake:\n    pass\n"""\ny = 2\n',
    "string pairing fooled by a quote in a comment": "# '''\nx = '''\nclass Fake: pass\n'''\nz = 3\n",
    "closing bracket at column 0": "x = foo(\n    1,\n)\ny = [\n1,\n2]\n",
    "code inside brackets at column 0": "x = dict(\na=1,\nb=2)\nclass A:\n    pass\n",
    "backslash continuation": "x = 1 + \\\n2\ny = 3\n",
    "compound statement continued at column 0": (
        "if a:\n    b = 1\nelif c:\n    b = 2\nelse:\n    b = 3\ntry:\n    pass\nexcept E:\n    pass\n"
        "finally:\n    pass\n"),
    "stacked and multi-line decorators": "@a\n@b(\n    1,\n)\nclass C:\n    x = 1\n@d\ndef f():\n    pass\n",
    "comment lines at column 0 inside a function": "def f():\n    x = 1\n# commented out\n    return x\n",
    "no newline at the end": "import os\nclass A(os.PathLike):\n    pass",
    "blank lines and form feeds": "\n\nimport os\n\f\nclass A:\n\n    pass\n\n\n",
    "lone carriage returns": "x = 1\ry = 2\rclass A:\r    pass\r",
    "windows line endings": "x = 1\r\nclass A:\r\n    y = (\r\n1)\r\n",
    "non-ASCII text": "s = 'é'\nclass Ä:\n    def ö(self): return 'ü'\n",
    "a triple quote inside a one-quote string": "def f():\n    return '\"\"\"'\n\n\nclass A:\n    pass\n",
    "column-0 text in a class's string": "class A:\n    x = \"\"\"\nclass B:\n\"\"\"\n\n\nclass C:\n    pass\n",
    # a decorated class is deferred too: what its decorators hold must not pass for its ``class`` line
    "a class line in a decorator's string": '@doc("""\nclass Fake:""")\nclass Real:\n    pass\n',
    "a class line in a decorator's continued string": "@doc('a\\\nclass Fake: b')\nclass Real:\n    pass\n",
    "code at column 0 in a decorator's brackets": "@reg(\nA,\n)\nclass C:\n    pass\n@reg(\nclass_=1)\ndef f():\n    pass\n",
}


def _pieces_dump(text: str) -> str:
    body = [stmt for _, stmts in top_level(text, {}) for stmt in stmts]
    return ast.dump(ast.Module(body=body, type_ignores=[]), include_attributes=True)


@pytest.mark.parametrize("name", sorted(MISLEADING))
def test_statements_parse_as_the_whole_file(name):
    text = MISLEADING[name]
    assert _pieces_dump(text) == ast.dump(ast.parse(text), include_attributes=True)


def test_every_file_of_this_repository_splits_exactly():
    files = [p for folder in ("server", "tests", "benchmarks") for p in (REPO / folder).rglob("*.py")]
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert _pieces_dump(text) == ast.dump(ast.parse(text), include_attributes=True), path


CLASS_SHAPES = {
    "multi-line header": "class A(\n    Base,\n    metaclass=M,\n):\n    x = 1\n\n    def f(self):\n        return 1\n",
    "decorated": "@dataclass(frozen=True)\nclass A:\n    x: int = 0\n    y: str = ''\n",
    "docstring with code-like lines": 'class A:\n    """Doc:\nat column 0\n    def fake(self):\n"""\n\n    def f(self):\n        pass\n',
    "a colon in a header comment": "class A(  # note:\n    B,\n):\n    def f(self):\n        pass\n",
    "decorated methods": "class A:\n    @property\n    def x(self):\n        return 1\n\n    @x.setter\n    def x(self, v):\n        pass\n",
    "column-0 comment in a method": "class A:\n    def f(self):\n        x = 1\n# commented out\n        return x\n",
    "one-line class": "class A: pass\n",
    "nested class and brackets back at column 0": "class A:\n    class B:\n        y = (\n    1)\n    z = [\n1]\n",
    "tabs": "class A:\n\tdef f(self):\n\t\treturn 1\n",
    "windows line endings": "class A:\r\n    def f(self):\r\n        return 1\r\n",
    "else at the body's level": "class A:\n    if X:\n        y = 1\n    else:\n        y = 2\n",
    "a string opened in one method, closed in the next": 'class A:\n    x = """\n    def f(self):\n"""\n    def g(self):\n        pass\n',
}


def _dump(body: list) -> str:
    return ast.dump(ast.Module(body=body, type_ignores=[]), include_attributes=True)


@pytest.mark.parametrize("name", sorted(CLASS_SHAPES))
def test_a_class_parsed_statement_by_statement_is_the_class_parsed_whole(name):
    text = CLASS_SHAPES[name]
    by_member = parse_by_member(text, 3, "m.py", {}, {})
    if name == "one-line class":
        assert by_member is None  # no indented body to split: parsed whole
    else:
        assert by_member is not None and _dump(by_member) == _dump(ast.parse("\n" * 3 + text).body)


def test_every_class_of_this_repository_parses_statement_by_statement_as_whole():
    files = [p for folder in ("server", "tests", "benchmarks") for p in (REPO / folder).rglob("*.py")]
    classes = split = 0
    for path in files:
        for (line, statement, _), body in top_level(path.read_text(encoding="utf-8"), {}):
            if body and type(body[0]) is ast.ClassDef:
                classes += 1
                by_member = parse_by_member(statement, line, str(path), {}, {})
                if by_member is not None:
                    split += 1
                    assert _dump(by_member) == _dump(body), (path, line)
    assert classes > 50 and split > 0.9 * classes


def test_an_edit_inside_a_method_parses_that_method_only(monkeypatch):
    memo = StatementMemo()
    _scan(WRAPPER, memo)
    edited = WRAPPER.replace("return self.language_model(x)", "return self.language_model(x + 1)")
    parsed = []
    real_parse = statements_module.parse_at
    for module in (scan_module, statements_module):  # every parse, from the file's split or a class's
        monkeypatch.setattr(module, "parse_at", lambda text, *rest: parsed.append(text) or real_parse(text, *rest))
    summary = _scan(edited, memo)
    monkeypatch.undo()
    assert summary == _whole(edited)
    # The class header (with a ``pass`` body) and the edited method; ``__init__`` came from the memo
    assert [text.split("\n")[1].strip() for text in parsed] == ["pass", "def forward(self, x):"]
    assert _scan(WRAPPER, memo) == _whole(WRAPPER)  # and back


WRAPPER = '''\
from .llama import LlamaForCausalLM


class Helper:
    def run(self):
        return 1


# spec-contract: ignore[SC001]
class Wrapper:
    def __init__(self, config):
        self.language_model = LlamaForCausalLM(config)

    def forward(self, x):
        return self.language_model(x)


EntryClass = [Wrapper]
'''


def _scan(text: str, memo: StatementMemo | None = None, worker: bool = False):
    """An editor buffer's scan (with a memo: every class parsed) or a disk file's (classes deferred)."""
    return scan("/t/m.py", "m", "d", text, worker=worker, entry_variable="EntryClass", memo=memo)


def _whole(text: str, worker: bool = False):
    """The summary of ``text`` scanned with nothing to reuse and nothing deferred."""
    return _scan(text, StatementMemo(), worker)


def test_a_memo_reuses_untouched_statements_and_gives_the_same_summary():
    memo = StatementMemo()
    _scan(WRAPPER, memo)
    before = dict(memo.pieces)
    edited = WRAPPER.replace("return 1", "return 2")
    summary = _scan(edited, memo)
    assert summary == _whole(edited)
    reused = [key for key, (_, piece) in memo.pieces.items() if key in before and before[key][1] is piece]
    assert len(reused) == len(memo.pieces) - 1  # only ``class Helper`` was parsed again
    assert any("class Helper" in key[0] for key in set(memo.pieces) - set(reused))


def test_a_memo_sees_a_suppression_comment_change_above_an_unchanged_class():
    memo = StatementMemo()
    assert find_class(_scan(WRAPPER, memo), "Wrapper").suppressed == frozenset({"SC001"})
    edited = WRAPPER.replace("# spec-contract: ignore[SC001]", "# nothing to see")
    assert find_class(_scan(edited, memo), "Wrapper").suppressed == frozenset()


@pytest.mark.parametrize("worker", [False, True])
@pytest.mark.parametrize("edit", [
    lambda text: "import os\n" + text,  # a new first line moves every statement
    lambda text: text.replace("\n\n", "\n", 1),  # one line less near the top
    lambda text: text.replace("class Wrapper:", "\n\nclass Wrapper:"),  # new lines above a class
], ids=["line-added", "line-removed", "lines-above-a-class"])
def test_a_memo_moves_statements_that_moved_without_parsing_them_again(monkeypatch, worker, edit):
    memo = StatementMemo()
    _scan(NESTED_AND_DECORATED, memo, worker=worker)
    moved = edit(NESTED_AND_DECORATED)
    parsed = []  # the top-level statements parsed (not reused)
    real_top_level = scan_module.top_level
    monkeypatch.setattr(scan_module, "top_level", lambda *args, **kwargs: [
        parsed.append(key) or (key, body) if body is not None else (key, body)
        for key, body in real_top_level(*args, **kwargs)])
    summary = _scan(moved, memo, worker=worker)
    monkeypatch.undo()
    assert summary == _whole(moved, worker=worker)  # every span, use and import line where a whole scan puts it
    assert len(parsed) <= 2  # at most a new statement and the one below it, whose line above changed
    line = moved.splitlines().index("class Wrapper:")
    assert find_class(summary, "Wrapper").span.line == line


def test_new_lines_move_the_statements_of_a_class_body_without_parsing_them_again(monkeypatch):
    """A new line inside a class moves the methods below it in that class, and every class below: none of
    them is parsed again, then or at the next edit in them, and every summary is what a whole scan gives."""
    memo = StatementMemo()
    _scan(NESTED_AND_DECORATED, memo)
    parsed = []
    real_parse = statements_module.parse_at
    for module in (scan_module, statements_module):
        monkeypatch.setattr(module, "parse_at", lambda text, *rest: parsed.append(text) or real_parse(text, *rest))

    def scanned(text: str) -> list[str]:
        parsed.clear()
        summary = _scan(text, memo)
        seen = [piece.split("\n")[1].strip() for piece in parsed]  # a class header or a method's first line
        assert summary == _whole(text)
        return seen

    # in __init__ of Wrapper: its header and __init__ are parsed again, forward only moves
    steps = [NESTED_AND_DECORATED.replace("(config)\n", "(config)\n\n", 1)]
    assert scanned(steps[-1]) == ["pass", "def __init__(self, config):"]
    # in forward, which moved: parsed as an edit is; Outer (moved twice) is not parsed at all
    steps.append(steps[-1].replace("return self.language_model(x)", "return self.language_model(x)\n"))
    assert scanned(steps[-1]) == ["pass", "def forward(self, x):"]
    # an edit in Outer, two lines down from where it was parsed: only the edited method is parsed
    steps.append(steps[-1].replace("def shallow(self):\n        pass", "def shallow(self):\n        return 1"))
    assert scanned(steps[-1]) == ["pass", "def shallow(self):"]
    # and back up: a line removed above every class parses only the import that lost it (one line: "")
    assert scanned(steps[-1].replace("LlamaForCausalLM\n\n", "LlamaForCausalLM\n", 1)) == [""]


def test_a_method_that_only_moved_is_not_read_again_and_its_facts_move_with_it(monkeypatch):
    """What a method adds to its class's summary (its member, ``self.<attr> = …`` delegates, forwards) is read
    once per text: a new line above it in its class moves those facts, and the summary is still the whole
    scan's, spans included."""
    text = WRAPPER.replace("        return self.language_model(x)\n",
                           "        self.head = LlamaForCausalLM(None)\n        return self.language_model(x)\n")
    memo = StatementMemo()
    _scan(text, memo)
    read = []
    real_read = classes_module._Body.read
    monkeypatch.setattr(classes_module._Body, "read", lambda body, stmts: read.append(body.method) or real_read(body, stmts))
    moved = text.replace("(config)\n", "(config)\n\n", 1)  # a new line in __init__: forward moves down
    summary = _scan(moved, memo)
    assert read == ["__init__"]
    assert summary == _whole(moved)
    wrapper = find_class(summary, "Wrapper")
    head = next(d for d in wrapper.delegates if d.attr == "head")
    assert moved.splitlines()[head.span.line].strip().startswith("self.head = ")


def test_a_memo_made_for_a_model_file_is_not_reused_for_a_worker():
    memo = StatementMemo()
    _scan(WRAPPER, memo)
    assert _scan(WRAPPER, memo, worker=True) == _whole(WRAPPER, worker=True)


@pytest.mark.parametrize("broken", [
    WRAPPER.replace("return 1", "return (1"),  # an open bracket swallows the rest of the file
    WRAPPER + "class Half(\n",                 # half-typed at the end
    "def f(:\n" + WRAPPER,                    # at the start
])
def test_a_syntax_error_anywhere_gives_the_files_own_error(broken):
    try:
        ast.parse(broken)
    except SyntaxError as exc:
        expected = exc
    summary = _scan(broken, StatementMemo())
    assert summary.error is not None and summary.classes == ()
    assert f"line {expected.lineno}" in summary.error


NESTED_AND_DECORATED = WRAPPER + '''

@dataclass
class Config:
    size: int = 0


def helper():
    return Config()


def factory():
    from .llama import LlamaForCausalLM
    return LlamaForCausalLM


class Lazy:
    def __init__(self):
        from .mistral import MistralForCausalLM
        self.inner = MistralForCausalLM()


class Outer(Wrapper):
    class Inner:
        def deep(self):
            pass

    def shallow(self):
        pass


if TYPE_CHECKING:
    class Typed:
        pass
'''


def _read(summary, classes) -> list:
    """Classes as resolution reads them: a deferred statement's skeleton leaves some methods' factories to be
    read when asked for (``deferred.factory``), so each class is compared with the factory each name answers."""
    return [replace(cls, unread=(), factories=tuple(
        (name, factory(summary, cls, name)) for name in sorted({n for n, _ in cls.factories} | {
            m.name for m in cls.unread}) if factory(summary, cls, name) is not None)) for cls in classes]


def test_a_disk_file_defers_its_classes_and_parses_each_as_the_whole_scan_does():
    lazy, whole = _scan(NESTED_AND_DECORATED), _whole(NESTED_AND_DECORATED)
    # Parsed at once: a class nested in an ``if`` (a decorated one waits as the others do).
    assert {d.name for d in lazy.deferred} == {"Helper", "Wrapper", "Config", "Lazy", "Outer"}
    assert [c.qualname for c in lazy.classes] == ["Typed"]
    assert lazy.imports == whole.imports
    # The import in ``factory`` was parsed with the file; the one in ``Lazy`` is parsed when its name is
    # looked up; ``helper`` was never parsed.
    assert lazy.local_imports == whole.local_imports[:1]
    assert [d.name for i, d in enumerate(lazy.deferred) if i in lazy.parsed] == ["Wrapper"]  # registered
    assert local_import(lazy, "LlamaForCausalLM") == local_import(whole, "LlamaForCausalLM") is not None
    assert local_import(lazy, "nothing") is None
    assert [d.name for i, d in enumerate(lazy.deferred) if i in lazy.parsed] == ["Wrapper"]
    assert local_import(lazy, "MistralForCausalLM") == local_import(whole, "MistralForCausalLM") is not None
    assert [d.name for i, d in enumerate(lazy.deferred) if i in lazy.parsed] == ["Wrapper", "Lazy"]
    assert lazy.entry_classes == whole.entry_classes
    assert lazy.has_class("Outer") and not lazy.has_class("Inner") and not lazy.has_class("nothing")
    assert _read(lazy, [find_class(lazy, "Outer.Inner")]) == _read(whole, [find_class(whole, "Outer.Inner")])
    assert lazy.deferred_error() is None
    # Parsed so far: the registered class (at scan time) and those asked for.
    assert [d.name for i, d in enumerate(lazy.deferred) if i in lazy.parsed] == ["Wrapper", "Lazy", "Outer"]
    assert _read(lazy, all_classes(lazy, mentioning="language_model")) == _read(whole, [find_class(whole, "Wrapper")] + [
        c for c in whole.classes if c.qualname == "Typed"])
    assert _read(lazy, all_classes(lazy)) == _read(whole, whole.classes)
    assert _read(lazy, top_level_classes(lazy, ["Wrapper", "Inner"])) == _read(whole, [find_class(whole, "Wrapper")])


LOCAL_IMPORTS = """
from .top import Shadowed


def first():
    from .early import Twice


class Bracketed:
    def __init__(self):
        from .a import (  # the comment hides a ")" from a bracket count
            Plain,
            Other as Renamed,
        )


class Continued:
    def __init__(self):
        from .b import One, \\
            Two


class Later:
    def build(self):
        from .late import Twice, Shadowed


class Normalised:
    def build(self):
        from .c import \ufb01le_model  # the parser reads the ligature as "fi"


class Mentions:
    def build(self):
        return Plain, Two, Renamed  # a use is not an import: this class stays deferred
"""


@pytest.mark.parametrize("name, module", [
    ("Plain", "a"), ("Renamed", "a"), ("Two", "b"), ("file_model", "c"),
    ("Twice", "late"),  # the last binding in the file wins, deferred or not
    ("Shadowed", None),  # bound at module level: no local import counts (resolution looks there first)
    ("Other", None), ("missing", None),
])
def test_an_import_inside_a_deferred_class_binds_its_name_as_in_the_whole_scan(name, module):
    lazy, whole = _scan(LOCAL_IMPORTS), _whole(LOCAL_IMPORTS)
    expected = local_import(whole, name) if name not in {b.name for b in whole.imports} else None
    assert (expected.module if expected else None) == module
    if module is not None:
        assert local_import(lazy, name) == expected
    else:
        assert name in {b.name for b in lazy.imports} or local_import(lazy, name) is None
    parsed = {lazy.deferred[i].name for i in lazy.parsed}
    assert "Mentions" not in parsed  # it spells the names, but imports nothing


def test_a_deferred_class_keeps_its_suppression_comment():
    assert find_class(_scan(WRAPPER), "Wrapper").suppressed == frozenset({"SC001"})


def test_a_deferred_class_that_does_not_parse_is_missing_and_says_why():
    broken = WRAPPER.replace("    def forward(self, x):", "    def forward(self, x:")
    summary = _scan(broken)
    assert summary.error is None and find_class(summary, "Helper") is not None
    assert find_class(summary, "Wrapper") is None
    assert summary.deferred_error().startswith("SyntaxError")
    assert f"line {broken.splitlines().index('    def forward(self, x:') + 1}" in summary.deferred_error()


def test_registered_classes_and_their_bases_and_inners_in_the_file_are_parsed_with_the_file():
    text = """
class Attention:
    pass


class Backbone:
    def __init__(self):
        self.attn = Attention()


class Base:
    pass


class Unused:
    pass


class ForCausalLM(Base):
    def __init__(self):
        self.model = Backbone()


EntryClass = ForCausalLM
"""
    summary = _scan(text)
    parsed = [d.name for i, d in enumerate(summary.deferred) if i in summary.parsed]
    assert parsed == ["Attention", "Backbone", "Base", "ForCausalLM"]
    assert all_classes(summary) == list(_whole(text).classes)


@pytest.mark.parametrize("odd", ["\f", "\x1c", "\x85", "\u2028"])
def test_characters_splitlines_takes_for_line_breaks_do_not_shift_spans_or_suppressions(odd):
    # A form feed between sections, or such a character inside a string: the parser does not break lines
    # there, so neither may the spans, nor the line a suppression comment is looked for on.
    text = f"X = '{odd}'\n# spec-contract: ignore\n\n# {odd}\nclass Wrapper:\n    pass\n"
    for summary in (_scan(text), _whole(text)):
        cls = find_class(summary, "Wrapper")
        assert (cls.span.line, cls.span.col, cls.span.end_col) == (4, 6, 13)
        assert cls.suppressed == frozenset()  # the comment is three lines above the class


def _same_summary(lazy, whole) -> None:
    assert (lazy.error is None) == (whole.error is None)
    assert (lazy.imports, lazy.assignments, lazy.entry_classes) == (whole.imports, whole.assignments, whole.entry_classes)
    assert _read(lazy, all_classes(lazy)) == _read(whole, whole.classes)


@pytest.mark.parametrize("name", sorted(MISLEADING))
def test_a_disk_scan_summarises_misleading_text_as_the_whole_scan(name):
    _same_summary(_scan(MISLEADING[name]), _whole(MISLEADING[name]))


def test_a_disk_scan_summarises_every_file_of_this_repository_as_the_whole_scan():
    for path in [p for folder in ("server", "tests", "benchmarks") for p in (REPO / folder).rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        _same_summary(_scan(text), _whole(text))
        assert _scan(text, worker=True) == _whole(text, worker=True), path


def test_triple_quotes_are_found_where_the_regular_expression_finds_them():
    """The split pairs triple quotes found with ``str.find``: the same places, in the same order, as
    ``re.finditer`` of the two finds, on every run of quotes (overlapping, mixed, touching)."""
    import random
    import re

    from spec_contract.engine.summarise.statements import _triple_quotes

    pair = re.compile(r'"""|\'\'\'')
    rng = random.Random(25)
    texts = ["", '""""', "''''''", "\"\"\"'''\"\"\"", *("".join(rng.choice("\"'x\n") for _ in range(rng.randint(0, 24)))
                                                       for _ in range(5000))]
    for text in texts:
        assert list(_triple_quotes(text)) == [(m.start(), m.group()) for m in pair.finditer(text)], repr(text)
