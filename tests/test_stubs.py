"""The delegation stub and suppression comment generators (``spec_contract.engine.edits.stubs``).

Each test applies the returned edit to the text, checks the exact result in the cases that pin the format,
parses every result, and, where the signature matters, runs the generated wrapper against a real inner class
to show that arguments of every kind arrive where the inner method expects them.
"""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path

import pytest
from spec_contract.engine.edits.stubs import Delegation, StubError, delegation_edit, suppression_edit
from spec_contract.engine.results import TextEdit
from spec_contract.engine.text import apply_edits

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo" / "minisgl" / "models"


def apply(text: str, edit: TextEdit) -> str:
    """Apply one edit with the product's own applier (the one ``check --fix`` uses); the result must parse."""
    result = apply_edits(text, [edit])
    ast.parse(result)
    return result


def line_of(source: str, needle: str) -> int:
    return next(i for i, line in enumerate(source.splitlines()) if needle in line)


def method(member: str, inner: str, needle: str | None = None, delegate: str = "language_model") -> Delegation:
    kind = "async_method" if f"async def {member}(" in inner else "method"
    return Delegation(member, delegate, kind, inner, line_of(inner, needle or f"def {member}("))


def stub_for(member: str, inner: str, wrapper_header: str = "", needle: str | None = None) -> str:
    """The member generated into a minimal wrapper whose module starts with ``wrapper_header``."""
    wrapper = f"{wrapper_header}class W:\n    def __init__(self, inner):\n        self.language_model = inner\n"
    edit = delegation_edit("w.py", wrapper, "W", [method(member, inner, needle)])
    assert edit is not None
    result = apply(wrapper, edit)
    assert result.startswith(wrapper)
    return result[len(wrapper) :]


def run_wrapper(wrapper_source: str, inner_source: str, wrapper_class: str = "W"):
    """Execute the inner module and the patched wrapper module; return an instance of the wrapper."""
    inner_ns: dict = {}
    exec(compile(inner_source, "inner.py", "exec"), inner_ns)
    ns: dict = {}
    exec(compile(wrapper_source, "w.py", "exec"), ns)
    return ns[wrapper_class](inner_ns["Inner"]())


# --- the demo workspace --------------------------------------------------------------------------------------


def test_demo_llava_gets_both_forwards_and_they_work():
    llava = (DEMO / "llava.py").read_text()
    llama = (DEMO / "llama.py").read_text()
    delegations = [
        method("get_embed_and_head", llama),
        method("set_eagle3_layers_to_capture", llama),
    ]
    edit = delegation_edit("llava.py", llava, "LlavaForConditionalGeneration", delegations)
    assert edit is not None
    result = apply(llava, edit)
    added = (
        "\n"
        "    def get_embed_and_head(self):\n"
        "        return self.language_model.get_embed_and_head()\n"
        "\n"
        "    def set_eagle3_layers_to_capture(self, layer_ids=None):\n"
        "        return self.language_model.set_eagle3_layers_to_capture(layer_ids)\n"
    )
    anchor = "        return self.language_model.set_embed_and_head(embed, head)\n"
    assert result == llava.replace(anchor, anchor + added)
    assert "\n\n\nEntryClass = LlavaForConditionalGeneration" in result  # two blank lines kept after the class

    # Idempotent: once applied, nothing is left to add.
    assert delegation_edit("llava.py", result, "LlavaForConditionalGeneration", delegations) is None

    # The forwards reach the inner model.
    llama_ns: dict = {}
    exec(compile(llama, "llama.py", "exec"), llama_ns)
    llava_ns = {"LlamaForCausalLM": llama_ns["LlamaForCausalLM"]}  # stands in for the package import
    exec(compile(result.replace("from minisgl.models.llama import LlamaForCausalLM\n", ""), "llava.py", "exec"), llava_ns)
    config = type("Config", (), {"text_config": None})()
    model = llava_ns["LlavaForConditionalGeneration"](config)
    model.set_embed_and_head("E", "H")
    assert model.get_embed_and_head() == ("E", "H")
    model.set_eagle3_layers_to_capture([1, 2])
    assert model.language_model.capture_layers == [1, 2]


# --- signatures ----------------------------------------------------------------------------------------------

SIGNATURES = '''\
import torch


class Inner:
    def pos_only(self, a, b, /, c, d=3):
        return ("pos_only", a, b, c, d)

    def defaults(self, s="x, y", n=None, t=(1, -2.5), d={"k": [1]}, f=lambda v: -v):
        return ("defaults", s, n, t, d, f(2))

    def builtin_default(self, w=len, e=ValueError):
        return ("builtin_default", w, e)

    def star(self, first, *rest):
        return ("star", first, rest)

    def kw_only(self, a, *, flag=False, name):
        return ("kw_only", a, flag, name)

    def kwargs(self, a=1, **extra):
        return ("kwargs", a, extra)

    def everything(self, p, /, q, *args, k, **kw):
        return ("everything", p, q, args, k, kw)

    async def fetch(self, key, *, default=None):
        return ("fetch", key, default)

    async def stream(self, n):
        for i in range(n):
            yield i

    @staticmethod
    def static(a, b="s"):
        return ("static", a, b)

    @classmethod
    def klass(cls, a, *, b=2):
        return ("klass", cls.__name__, a, b)

    @torch.no_grad()
    def decorated(self, x):
        return ("decorated", x)

    def uses_module_default(self, dtype=torch.float16, scale=1):
        return ("uses_module_default", dtype, scale)

    def __call_me__(*args):
        return ("receiver in args", args[1:])
'''


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        (
            "pos_only",
            "    def pos_only(self, a, b, /, c, d=3):\n"
            "        return self.language_model.pos_only(a, b, c, d)\n",
        ),
        (
            "defaults",
            '    def defaults(self, s="x, y", n=None, t=(1, -2.5), d={"k": [1]}, f=lambda v: -v):\n'
            "        return self.language_model.defaults(s, n, t, d, f)\n",
        ),
        (
            "builtin_default",
            "    def builtin_default(self, w=len, e=ValueError):\n"
            "        return self.language_model.builtin_default(w, e)\n",
        ),
        ("star", "    def star(self, first, *rest):\n        return self.language_model.star(first, *rest)\n"),
        (
            "kw_only",
            "    def kw_only(self, a, *, flag=False, name):\n"
            "        return self.language_model.kw_only(a, flag=flag, name=name)\n",
        ),
        ("kwargs", "    def kwargs(self, a=1, **extra):\n        return self.language_model.kwargs(a, **extra)\n"),
        (
            "everything",
            "    def everything(self, p, /, q, *args, k, **kw):\n"
            "        return self.language_model.everything(p, q, *args, k=k, **kw)\n",
        ),
        (
            "fetch",
            "    async def fetch(self, key, *, default=None):\n"
            "        return await self.language_model.fetch(key, default=default)\n",
        ),
        ("stream", "    def stream(self, n):\n        return self.language_model.stream(n)\n"),
        ("static", '    def static(self, a, b="s"):\n        return self.language_model.static(a, b)\n'),
        ("klass", "    def klass(self, a, *, b=2):\n        return self.language_model.klass(a, b=b)\n"),
        ("decorated", "    def decorated(self, x):\n        return self.language_model.decorated(x)\n"),
    ],
)
def test_signature_is_copied_and_arguments_forwarded_by_kind(member, expected):
    assert stub_for(member, SIGNATURES) == "\n" + expected


def test_default_the_wrapper_cannot_evaluate_forwards_everything_through_args_and_kwargs():
    # ``torch`` is not imported by the wrapper, so ``dtype=torch.float16`` would fail at import time there.
    assert stub_for("uses_module_default", SIGNATURES) == (
        "\n"
        "    def uses_module_default(self, *args, **kwargs):\n"
        "        return self.language_model.uses_module_default(*args, **kwargs)\n"
    )
    # With torch imported, the default is copied as written.
    assert stub_for("uses_module_default", SIGNATURES, "import torch\n\n\n") == (
        "\n"
        "    def uses_module_default(self, dtype=torch.float16, scale=1):\n"
        "        return self.language_model.uses_module_default(dtype, scale)\n"
    )


def test_method_whose_receiver_is_in_star_args_forwards_everything():
    assert stub_for("__call_me__", SIGNATURES) == (
        "\n"
        "    def __call_me__(self, *args, **kwargs):\n"
        "        return self.language_model.__call_me__(*args, **kwargs)\n"
    )


def test_generated_forwards_behave_like_the_inner_methods():
    inner_source = SIGNATURES.replace("import torch\n", "").replace("    @torch.no_grad()\n", "")
    inner_source = inner_source.replace("dtype=torch.float16", "dtype='f16'")
    members = [
        "pos_only", "defaults", "builtin_default", "star", "kw_only", "kwargs", "everything", "fetch", "stream",
        "static", "klass", "decorated", "uses_module_default",
    ]
    wrapper = "class W:\n    def __init__(self, inner):\n        self.language_model = inner\n"
    edit = delegation_edit("w.py", wrapper, "W", [method(m, inner_source) for m in members])
    w = run_wrapper(apply(wrapper, edit), inner_source)
    inner = w.language_model

    assert w.pos_only(1, 2, 3) == inner.pos_only(1, 2, 3) == ("pos_only", 1, 2, 3, 3)
    assert w.pos_only(1, 2, c=5, d=6) == ("pos_only", 1, 2, 5, 6)
    with pytest.raises(TypeError):
        w.pos_only(a=1, b=2, c=3)  # positional-only stays positional-only
    assert w.defaults() == inner.defaults()
    assert w.defaults("a", t=(0,)) == inner.defaults("a", t=(0,))
    assert w.builtin_default() == ("builtin_default", len, ValueError)
    assert w.star(1, 2, 3) == ("star", 1, (2, 3))
    assert w.kw_only(1, name="n") == ("kw_only", 1, False, "n")
    with pytest.raises(TypeError):
        w.kw_only(1, True, "n")  # keyword-only stays keyword-only
    assert w.kwargs(5, x=1, y=2) == ("kwargs", 5, {"x": 1, "y": 2})
    assert w.everything(1, 2, 3, 4, k=5, z=6) == ("everything", 1, 2, (3, 4), 5, {"z": 6})
    assert asyncio.run(w.fetch("key", default=0)) == ("fetch", "key", 0)

    async def collect():
        return [i async for i in w.stream(3)]

    assert asyncio.run(collect()) == [0, 1, 2]
    assert w.static(1) == ("static", 1, "s")
    assert w.klass(1, b=3) == ("klass", "Inner", 1, 3)
    assert w.decorated(7) == ("decorated", 7)
    assert w.uses_module_default(scale=2) == ("uses_module_default", "f16", 2)


def test_multiline_default_with_comment_becomes_one_clean_line():
    inner = (
        "class Inner:\n"
        "    def m(self, sizes=[\n"
        "        1,  # small\n"
        "        2,\n"
        "    ]):\n"
        "        return sizes\n"
    )
    assert stub_for("m", inner) == "\n    def m(self, sizes=[1, 2]):\n        return self.language_model.m(sizes)\n"


def test_long_signature_is_split_one_parameter_per_line():
    inner = (
        "class Inner:\n"
        "    def set_eagle3_layers_to_capture(self, layer_ids=None, capture_hidden_mode=None, "
        "aux_hidden_state_layer_ids=None):\n"
        "        pass\n"
    )
    assert stub_for("set_eagle3_layers_to_capture", inner) == (
        "\n"
        "    def set_eagle3_layers_to_capture(\n"
        "        self,\n"
        "        layer_ids=None,\n"
        "        capture_hidden_mode=None,\n"
        "        aux_hidden_state_layer_ids=None,\n"
        "    ):\n"
        "        return self.language_model.set_eagle3_layers_to_capture(\n"
        "            layer_ids,\n"
        "            capture_hidden_mode,\n"
        "            aux_hidden_state_layer_ids,\n"
        "        )\n"
    )


def test_inner_line_picks_the_definition_among_several_of_the_same_name():
    inner = (
        "class Base:\n"
        "    def m(self, a):\n"
        "        pass\n"
        "\n"
        "class Inner(Base):\n"
        "    def m(self, a, b=2):\n"
        "        pass\n"
    )
    assert "def m(self, a, b=2):" in stub_for("m", inner, needle="def m(self, a, b=2)")
    assert "def m(self, a):" in stub_for("m", inner, needle="def m(self, a)")


def test_overloads_and_unknown_sources_forward_everything():
    inner = (
        "from typing import overload\n"
        "class Inner:\n"
        "    @overload\n"
        "    def m(self, a: int) -> int: ...\n"
        "    @overload\n"
        "    def m(self, a: str) -> str: ...\n"
        "    def m(self, a):\n"
        "        return a\n"
    )
    generic = "\n    def m(self, *args, **kwargs):\n        return self.language_model.m(*args, **kwargs)\n"
    assert stub_for("m", inner, "from typing import overload\n\n\n", needle="def m(self, a: int)") == generic
    wrapper = "class W:\n    pass\n"
    for source, line in [(None, None), ("class Inner:\n    pass\n", 0), ("def broken(:\n", 0)]:
        edit = delegation_edit("w.py", wrapper, "W", [Delegation("m", "language_model", "method", source, line)])
        assert apply(wrapper, edit) == wrapper + generic
    edit = delegation_edit("w.py", wrapper, "W", [Delegation("m", "llm", "async_method", None, None)])
    assert apply(wrapper, edit) == wrapper + (
        "\n    async def m(self, *args, **kwargs):\n        return await self.llm.m(*args, **kwargs)\n"
    )


def test_names_bound_below_the_class_are_not_there_when_the_class_body_runs():
    inner = "class Inner:\n    def m(self, x=DEFAULT) -> Result:\n        return x\n"
    wrapper = "class W:\n    pass\n\n\nDEFAULT = 1\nResult = int\n"
    edit = delegation_edit("w.py", wrapper, "W", [method("m", inner)])
    assert apply(wrapper, edit) == wrapper.replace(
        "    pass\n",
        "    pass\n\n    def m(self, *args, **kwargs):\n        return self.language_model.m(*args, **kwargs)\n",
    )
    above = "DEFAULT = 1\nResult = int\n\n\nclass W:\n    pass\n"
    assert apply(above, delegation_edit("w.py", above, "W", [method("m", inner)])).endswith(
        "    def m(self, x=DEFAULT) -> Result:\n        return self.language_model.m(x)\n"
    )
    # Postponed annotations may name what comes later; defaults still may not.
    postponed = "from __future__ import annotations\n\n\n" + wrapper
    assert "    def m(self, *args, **kwargs) -> Result:\n" in apply(
        postponed, delegation_edit("w.py", postponed, "W", [method("m", inner)])
    )


def test_inner_definition_in_an_awkward_layout():
    inner = (
        "if True:\n"
        "    class Inner:\n"
        "        @some.decorator(\n"
        "    1)\n"
        "        def m(self, a=[\n"
        "1], *, b: 'x' = 2):\n"
        '            """Doc\n'
        "no indent\n"
        '            """\n'
        "# column zero comment\n"
        "\n"
        "            return a\n"
    )
    assert stub_for("m", inner) == "\n    def m(self, a=[1], *, b=2):\n        return self.language_model.m(a, b=b)\n"


def test_staticmethod_with_a_parameter_named_self_forwards_everything():
    inner = "class Inner:\n    @staticmethod\n    def m(self, x):\n        return x\n"
    assert stub_for("m", inner) == (
        "\n    def m(self, *args, **kwargs):\n        return self.language_model.m(*args, **kwargs)\n"
    )


# --- annotations ---------------------------------------------------------------------------------------------

ANNOTATED = '''\
import typing
from typing import Literal, Optional

import torch


class Inner:
    def get_embed_and_head(self) -> tuple[torch.Tensor, torch.Tensor]:
        return None

    def pick(self, n: Optional[int] = None, *, m: Literal["a"] = "a") -> typing.Any:
        return []

    def quoted(self, x: "torch.Tensor") -> "Optional[Inner]":
        return None
'''


def test_annotations_kept_only_when_the_wrapper_module_has_their_names():
    bare = stub_for("get_embed_and_head", ANNOTATED)
    assert bare == "\n    def get_embed_and_head(self):\n        return self.language_model.get_embed_and_head()\n"
    with_torch = stub_for("get_embed_and_head", ANNOTATED, "import torch\n\n\n")
    assert with_torch == (
        "\n"
        "    def get_embed_and_head(self) -> tuple[torch.Tensor, torch.Tensor]:\n"
        "        return self.language_model.get_embed_and_head()\n"
    )
    assert stub_for("pick", ANNOTATED) == (
        '\n    def pick(self, n=None, *, m="a"):\n        return self.language_model.pick(n, m=m)\n'
    )
    assert stub_for("pick", ANNOTATED, "from typing import Literal, Optional\nimport typing\n\n\n").startswith(
        '\n    def pick(self, n: Optional[int] = None, *, m: Literal["a"] = "a") -> typing.Any:\n'
    )
    # Each annotation is kept or dropped on its own.
    assert stub_for("pick", ANNOTATED, "from typing import Optional as Optional\n\n\n").startswith(
        '\n    def pick(self, n: Optional[int] = None, *, m="a"):\n'
    )


def test_string_annotations_are_checked_by_the_names_inside_them():
    assert stub_for("quoted", ANNOTATED, "import torch\nfrom typing import Optional\n\n\n").startswith(
        '\n    def quoted(self, x: "torch.Tensor"):\n'  # ``Inner`` is not a name of the wrapper module
    )
    assert stub_for("quoted", ANNOTATED, "import torch\nfrom typing import Optional\n\nInner = object\n\n\n").startswith(
        '\n    def quoted(self, x: "torch.Tensor") -> "Optional[Inner]":\n'
    )


def test_type_checking_imports_count_only_with_postponed_annotations():
    checking = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import torch\n\n\n"
    plain = "\n    def get_embed_and_head(self):\n"
    assert stub_for("get_embed_and_head", ANNOTATED, checking).startswith(plain)
    assert stub_for("get_embed_and_head", ANNOTATED, "from __future__ import annotations\n\n" + checking).startswith(
        "\n    def get_embed_and_head(self) -> tuple[torch.Tensor, torch.Tensor]:\n"
    )
    # Names imported at run time in an ``else`` branch (or under try/except) are there.
    fallback = "try:\n    import torch\nexcept ImportError:\n    torch = None\n\n\n"
    assert "-> tuple[torch.Tensor, torch.Tensor]:" in stub_for("get_embed_and_head", ANNOTATED, fallback)


# --- properties and attributes -------------------------------------------------------------------------------


def test_property_and_attribute_forward_as_properties():
    inner = (
        "import torch\n"
        "class Inner:\n"
        "    def __init__(self):\n"
        "        self.hot_token_id = [3]\n"
        "    @property\n"
        "    def lm_head(self) -> torch.Tensor:\n"
        "        return 'head'\n"
    )
    wrapper = "import torch\n\n\nclass W:\n    def __init__(self, inner):\n        self.model = inner\n"
    delegations = [
        Delegation("lm_head", "model", "property", inner, line_of(inner, "def lm_head")),
        Delegation("hot_token_id", "model", "attribute", None, None),
    ]
    result = apply(wrapper, delegation_edit("w.py", wrapper, "W", delegations))
    assert result == wrapper + (
        "\n"
        "    @property\n"
        "    def lm_head(self) -> torch.Tensor:\n"
        "        return self.model.lm_head\n"
        "\n"
        "    @property\n"
        "    def hot_token_id(self):\n"
        "        return self.model.hot_token_id\n"
    )
    fake_torch = "import types\ntorch = types.SimpleNamespace(Tensor=object)\n"  # torch is not installed here
    ns: dict = {"__name__": "w"}
    inner_ns: dict = {}
    exec(inner.replace("import torch\n", fake_torch), inner_ns)
    exec(result.replace("import torch\n", fake_torch), ns)
    w = ns["W"](inner_ns["Inner"]())
    assert (w.lm_head, w.hot_token_id) == ("head", [3])


def test_inner_property_is_a_property_even_when_reported_as_a_method():
    inner = "import functools\nclass Inner:\n    @functools.cached_property\n    def vocab(self):\n        return 1\n"
    assert stub_for("vocab", inner) == "\n    @property\n    def vocab(self):\n        return self.language_model.vocab\n"


# --- placement and file styles -------------------------------------------------------------------------------

SIMPLE_INNER = "class Inner:\n    def get_embed_and_head(self):\n        return 1\n"


def add(wrapper: str, class_name: str = "W", path: str = "minicpmv.llm", inner: str = SIMPLE_INNER) -> str:
    edit = delegation_edit("w.py", wrapper, class_name, [method("get_embed_and_head", inner, delegate=path)])
    assert edit is not None and edit.span.line == edit.span.end_line and edit.span.col == edit.span.end_col
    result = apply(wrapper, edit)
    assert delegation_edit("w.py", result, class_name, [method("get_embed_and_head", inner, delegate=path)]) is None
    return result


def test_tab_indented_file():
    wrapper = "class W:\n\tdef __init__(self):\n\t\tself.minicpmv = None\n"
    assert add(wrapper) == wrapper + (
        "\n\tdef get_embed_and_head(self):\n\t\treturn self.minicpmv.llm.get_embed_and_head()\n"
    )


def test_two_space_indented_file_and_its_blank_line_style():
    wrapper = "class W:\n  def a(self):\n    pass\n  def b(self):\n    pass\n\nx = W()\n"
    assert add(wrapper) == (
        "class W:\n  def a(self):\n    pass\n  def b(self):\n    pass\n"
        "  def get_embed_and_head(self):\n    return self.minicpmv.llm.get_embed_and_head()\n"
        "\nx = W()\n"
    )
    docstring_hugging = 'class W:\n    """Doc."""\n    def a(self):\n        pass\n\n    def b(self):\n        pass\n'
    assert add(docstring_hugging) == docstring_hugging + (
        "\n    def get_embed_and_head(self):\n        return self.minicpmv.llm.get_embed_and_head()\n"
    )
    two_blank = "class W:\n    def a(self):\n        pass\n\n\n    def b(self):\n        pass\n"
    assert add(two_blank) == two_blank + (
        "\n\n    def get_embed_and_head(self):\n        return self.minicpmv.llm.get_embed_and_head()\n"
    )


@pytest.mark.parametrize("body", ['    """Only a docstring."""\n', "    pass\n", "    x: int = 1\n"])
def test_class_with_a_trivial_body(body):
    wrapper = f"import os\n\n\nclass W:\n{body}\n\nprint(os.sep)\n"
    assert add(wrapper) == (
        f"import os\n\n\nclass W:\n{body}"
        "\n    def get_embed_and_head(self):\n        return self.minicpmv.llm.get_embed_and_head()\n"
        "\n\nprint(os.sep)\n"
    )


def test_nested_class():
    wrapper = (
        "class Outer:\n"
        "    class Inner:\n"
        "        def __init__(self):\n"
        "            self.minicpmv = None\n"
        "\n"
        "    def outer_method(self):\n"
        "        pass\n"
    )
    assert add(wrapper, "Outer.Inner") == (
        "class Outer:\n"
        "    class Inner:\n"
        "        def __init__(self):\n"
        "            self.minicpmv = None\n"
        "\n"
        "        def get_embed_and_head(self):\n"
        "            return self.minicpmv.llm.get_embed_and_head()\n"
        "\n"
        "    def outer_method(self):\n"
        "        pass\n"
    )


def test_crlf_line_endings_are_kept():
    wrapper = "class W:\r\n    def a(self):\r\n        pass\r\n\r\n\r\nW()\r\n"
    result = add(wrapper)
    assert result == (
        "class W:\r\n    def a(self):\r\n        pass\r\n"
        "\r\n    def get_embed_and_head(self):\r\n        return self.minicpmv.llm.get_embed_and_head()\r\n"
        "\r\n\r\nW()\r\n"
    )
    assert re.search(r"(?<!\r)\n", result) is None


def test_class_at_end_of_file_without_trailing_newline():
    wrapper = "class W:\n    def a(self):\n        return 1  # last"
    assert add(wrapper) == (
        "class W:\n    def a(self):\n        return 1  # last\n"
        "\n    def get_embed_and_head(self):\n        return self.minicpmv.llm.get_embed_and_head()"
    )


@pytest.mark.parametrize(
    ("wrapper", "expected"),
    [
        ("class W(Base): pass\n", "class W(Base):\n    pass\n"),
        ("class W(Base):  pass; x = 1  # note\n\nW()\n", "class W(Base):\n    pass; x = 1  # note\n"),
        ("if True:\n\tclass W: ...\n", "if True:\n\tclass W:\n\t\t...\n"),
        ("class W: pass", "class W:\n    pass\n"),
        ("class W: pass\r\n", "class W:\r\n    pass\r\n"),
    ],
)
def test_one_line_body_moves_to_its_own_line_and_gets_the_members(wrapper, expected):
    delegations = [method("get_embed_and_head", SIMPLE_INNER)]
    result = apply(wrapper, delegation_edit("w.py", wrapper, "W", delegations))
    assert delegation_edit("w.py", result, "W", delegations) is None
    assert result.startswith(expected + ("\r\n" if "\r\n" in wrapper else "\n"))
    assert "def get_embed_and_head(self):" in result
    assert result.endswith("W()\n") == wrapper.endswith("W()\n")
    assert result.endswith(("\n", "\r\n")) == wrapper.endswith("\n")


@pytest.mark.parametrize(
    "last",
    [
        "    x = 1 + \\\n        2;\n",
        "    x = (1 +\n        2) ; \\\n\n",
        "    def f(self): return 1; \\\n\n",
        "    def f(self):\n        return 1 \\\n            + 2;\n",
        "    x = 1 \\\n        \\\n        ;  # two joined lines\n",
        "    x = 1  # a backslash in a comment joins nothing \\\n",
    ],
)
def test_member_goes_after_the_whole_last_statement(last):
    wrapper = f"class W:\n{last}\ny = 2\n"
    result = add(wrapper)
    assert result.startswith(f"class W:\n{last}")
    assert result.endswith("\ny = 2\n")


@pytest.mark.parametrize("char", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_line_break_characters_python_does_not_break_at_leave_the_member_in_place(char):
    alone = char if char == "\x0c" else f"#{char}"  # a form feed may stand on a line of its own
    wrapper = f"# a{char}comment\nx = '{char}'\n{alone}\nclass W:\n    def a(self):  # {char}\n        pass\n\ny = 2\n"
    result = add(wrapper)
    assert result.startswith(wrapper[: wrapper.index("\ny = 2")])
    assert result.endswith("return self.minicpmv.llm.get_embed_and_head()\n\ny = 2\n")


def test_trailing_comment_in_class_stays_after_the_new_member():
    wrapper = "class W:\n    def a(self):\n        pass\n    # end of W\n\nx = 1\n"
    result = add(wrapper)
    assert result.index("def get_embed_and_head") < result.index("# end of W")


def test_class_under_if_block_is_found():
    wrapper = "import sys\nif sys.platform:\n    class W:\n        pass\n"
    assert add(wrapper).endswith(
        "        pass\n\n        def get_embed_and_head(self):\n"
        "            return self.minicpmv.llm.get_embed_and_head()\n"
    )


# --- what is already there -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "member_def",
    [
        "    def get_embed_and_head(self):\n        return None\n",
        "    get_embed_and_head = None\n",
        "    get_embed_and_head: object = None\n",
        "    @property\n    def get_embed_and_head(self):\n        return None\n",
        "    def __init__(self):\n        self.get_embed_and_head = lambda: None\n",
        "    if True:\n        def get_embed_and_head(self):\n            pass\n",
    ],
)
def test_member_already_present_is_not_added_again(member_def):
    wrapper = f"class W:\n{member_def}"
    assert delegation_edit("w.py", wrapper, "W", [method("get_embed_and_head", SIMPLE_INNER)]) is None


def test_only_missing_members_are_added_and_duplicates_once():
    inner = SIMPLE_INNER + "    def set_embed_and_head(self, embed, head):\n        pass\n"
    wrapper = "class W:\n    def get_embed_and_head(self):\n        return 2\n"
    delegations = [method("get_embed_and_head", inner), method("set_embed_and_head", inner)] * 2
    result = apply(wrapper, delegation_edit("w.py", wrapper, "W", delegations))
    assert result == wrapper + (
        "\n    def set_embed_and_head(self, embed, head):\n"
        "        return self.language_model.set_embed_and_head(embed, head)\n"
    )
    assert delegation_edit("w.py", result, "W", delegations) is None


def test_errors_are_reported_as_stub_errors():
    with pytest.raises(StubError):
        delegation_edit("w.py", "class W:\n    pass\n", "Missing", [method("get_embed_and_head", SIMPLE_INNER)])
    with pytest.raises(StubError):
        delegation_edit("w.py", "class W(:\n", "W", [method("get_embed_and_head", SIMPLE_INNER)])
    with pytest.raises(StubError):
        suppression_edit("w.py", "class A:\n    pass\n", "A.B", "SC001")
    deep = "class W:\n    def __init__(self):\n        self.x = " + "1 if x else " * 2500 + "0\n"
    with pytest.raises(StubError, match="deeper"):  # libcst would recurse past Python's limit
        delegation_edit("w.py", deep, "W", [method("get_embed_and_head", SIMPLE_INNER)])
    assert apply(deep, suppression_edit("w.py", deep, "W", "SC001")).startswith("# spec-contract: ignore[SC001]\nclass W:")
    long = "class W:\n    X = " + " ".join(["'a'"] * 40000) + "\n"  # Python takes it, libcst's parser does not
    with pytest.raises(StubError, match="libcst"):
        delegation_edit("w.py", long, "W", [method("get_embed_and_head", SIMPLE_INNER)])
    # An inner file Python cannot build a tree for (a 50,000-term sum: past the recursion limit even after
    # another test, hypothesis's, raised it): forward everything.
    inner = SIMPLE_INNER + "x = " + "+".join(["1"] * 50000) + "\n"
    assert stub_for("get_embed_and_head", inner) == (
        "\n    def get_embed_and_head(self, *args, **kwargs):\n"
        "        return self.language_model.get_embed_and_head(*args, **kwargs)\n"
    )


# --- suppression ---------------------------------------------------------------------------------------------


def test_suppression_comment_goes_above_the_decorators_with_the_class_indentation():
    source = "import dataclasses\n\nif True:\n    @dataclasses.dataclass\n    class W:\n        pass\n"
    edit = suppression_edit("w.py", source, "W", "SC001")
    assert apply(source, edit) == (
        "import dataclasses\n\nif True:\n    # spec-contract: ignore[SC001]\n    @dataclasses.dataclass\n"
        "    class W:\n        pass\n"
    )
    bare = apply(source, suppression_edit("w.py", source, "W", None))
    assert "\n    # spec-contract: ignore\n    @dataclasses.dataclass\n" in bare


def test_suppression_of_nested_class_and_crlf():
    source = "class Outer:\r\n    class Inner:\r\n        pass\r\n"
    assert apply(source, suppression_edit("w.py", source, "Outer.Inner", "SC002")) == (
        "class Outer:\r\n    # spec-contract: ignore[SC002]\r\n    class Inner:\r\n        pass\r\n"
    )


def test_suppression_extends_an_existing_comment():
    source = "# spec-contract: ignore[SC001]\nclass W:\n    pass\n"
    once = apply(source, suppression_edit("w.py", source, "W", "SC002"))
    assert once == "# spec-contract: ignore[SC001, SC002]\nclass W:\n    pass\n"
    assert apply(once, suppression_edit("w.py", once, "W", "SC002")) == once  # already listed
    assert apply(once, suppression_edit("w.py", once, "W", None)) == "# spec-contract: ignore\nclass W:\n    pass\n"
    bare = "# spec-contract: ignore\nclass W:\n    pass\n"
    assert apply(bare, suppression_edit("w.py", bare, "W", "SC001")) == bare  # bare already covers every code


def test_suppression_extends_a_comment_on_the_class_line():
    source = "class W:  # spec-contract: ignore[SC002] (vision only)\n    pass\n"
    assert apply(source, suppression_edit("w.py", source, "W", "SC001")) == (
        "class W:  # spec-contract: ignore[SC002, SC001] (vision only)\n    pass\n"
    )


def test_unrelated_comment_above_the_class_is_left_alone():
    source = "# The wrapper.\nclass W:\n    pass\n"
    assert apply(source, suppression_edit("w.py", source, "W", "SC001")) == (
        "# The wrapper.\n# spec-contract: ignore[SC001]\nclass W:\n    pass\n"
    )


def test_the_suppression_comment_the_fix_writes_is_the_one_the_check_reads():
    """One grammar (``engine.suppression``): the codes the fix lists are the codes the scanner suppresses, and a
    bracket the scanner does not read as a code list (a bare ``ignore`` then) is not extended as one."""
    from spec_contract.engine.summarise.deferred import find_class
    from spec_contract.engine.summarise.scan import scan

    def suppressed(text: str) -> frozenset[str]:
        cls = find_class(scan("w.py", "w", "", text, worker=False, entry_variable=None), "W")
        assert cls is not None
        return cls.suppressed

    source = "import os\n\n\nclass W:\n    pass\n"
    for code in ("SC001", "SC002"):
        source = apply(source, suppression_edit("w.py", source, "W", code))
    assert suppressed(source) == {"SC001", "SC002"}
    odd = "class W:  # spec-contract: ignore[SC-1]\n    pass\n"
    assert suppressed(odd) == {"*"}
    assert apply(odd, suppression_edit("w.py", odd, "W", "SC001")) == odd


def test_a_class_defined_twice_is_suppressed_and_fixed_in_its_last_definition():
    """The runtime (and the check) use the last ``class W``: the comment and the forwards go there, both found
    by the one class walker."""
    from spec_contract.engine.summarise.deferred import find_class
    from spec_contract.engine.summarise.scan import scan

    source = "class W:\n    pass\n\n\nclass W:\n    x = 1\n"
    suppressed = apply(source, suppression_edit("w.py", source, "W", "SC001"))
    assert suppressed == "class W:\n    pass\n\n\n# spec-contract: ignore[SC001]\nclass W:\n    x = 1\n"
    cls = find_class(scan("w.py", "w", "", suppressed, worker=False, entry_variable=None), "W")
    assert cls is not None and cls.suppressed == {"SC001"}
    fixed = apply(source, delegation_edit("w.py", source, "W", [method("get_embed_and_head", SIMPLE_INNER)]))
    assert fixed.startswith("class W:\n    pass\n\n\nclass W:\n    x = 1\n\n    def get_embed_and_head(self):")
