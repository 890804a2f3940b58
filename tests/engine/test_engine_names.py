"""Resolving names across files: imports of every spelling, re-exports, namespace packages, inheritance.

The wrapper is always "holds a ``LlamaForCausalLM`` in ``self.language_model``"; what varies is how the
name reaches the wrapper's module and where the members live in the class hierarchy.
"""

from __future__ import annotations

import pytest
from engine_trees import EAGLE_WORKER, LLAMA, WORKER, analyze, base_tree, findings, make_tree
from spec_contract.engine.resolve.index import ClassKey

DRAFT_SITE = (WORKER, 6, False)


def missing_both(cls: str, inner: str = "LlamaForCausalLM", worker: str = WORKER) -> list[tuple]:
    return [
        ("SC001", cls, "get_embed_and_head", ("target",), "language_model", inner, "error", ((worker, 5, False),)),
        ("SC005", cls, "set_embed_and_head", ("draft",), "language_model", inner, "warning", ((worker, 6, False),)),
    ]


def wrapper(import_line: str, callee: str = "LlamaForCausalLM", name: str = "LlavaForConditionalGeneration") -> str:
    return f"""
        {import_line}

        class {name}:
            def __init__(self, config):
                self.language_model = {callee}(config)

        EntryClass = {name}
    """


def test_wrapper_inherits_the_forwards_from_a_base_in_another_package(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/common/__init__.py": "",
        "pkg/common/forwarding.py": """
            class ForwardEmbedHead:
                def get_embed_and_head(self):
                    return self.language_model.get_embed_and_head()

                def set_embed_and_head(self, embed, head):
                    self.language_model.set_embed_and_head(embed, head)
        """,
        "pkg/models/llava.py": """
            from pkg.common.forwarding import ForwardEmbedHead
            from pkg.models.llama import LlamaForCausalLM

            class LlavaForConditionalGeneration(ForwardEmbedHead):
                def __init__(self, config):
                    self.language_model = LlamaForCausalLM(config)

            EntryClass = LlavaForConditionalGeneration
        """,
    })
    assert findings(analyze(root)) == []


CAUSAL_LM_BASE = """
    class CausalLMBase:
        def get_embed_and_head(self):
            return None, None

        def set_embed_and_head(self, embed, head):
            pass
"""


def test_inner_members_defined_in_its_base_in_another_package_are_still_found(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/layers/__init__.py": "",
        "pkg/layers/causal_lm.py": CAUSAL_LM_BASE,
        "pkg/models/llama.py": """
            from pkg.layers.causal_lm import CausalLMBase

            class LlamaForCausalLM(CausalLMBase):
                pass
        """,
        "pkg/models/llava.py": wrapper("from pkg.models.llama import LlamaForCausalLM"),
    })
    analysis = analyze(root)
    assert findings(analysis) == missing_both("LlavaForConditionalGeneration")
    assert {f.provider.class_name for f in analysis.findings} == {"pkg.layers.causal_lm.CausalLMBase"}


def test_a_base_whose_text_never_names_a_member_is_followed_by_its_header_alone(tmp_path):
    # The inner model's member comes from a base two steps up. The class between, in a file of its own, never
    # spells the member: its header names its bases, and its body is not parsed to learn that it lacks it.
    root = base_tree(tmp_path, {
        "pkg/layers/__init__.py": "",
        "pkg/layers/causal_lm.py": CAUSAL_LM_BASE,
        "pkg/layers/mixins.py": """
            from pkg.layers.causal_lm import CausalLMBase

            class Unrelated:
                def get_embed_and_head(self):
                    return None, None

            class Middle(
                CausalLMBase,  # the bases span lines
            ):
                def forward(self, x):
                    self.cached = x
                    return x
        """,
        "pkg/models/llama.py": """
            from pkg.layers.mixins import Middle

            class LlamaForCausalLM(Middle):
                pass
        """,
        "pkg/models/llava.py": wrapper("from pkg.models.llama import LlamaForCausalLM"),
    })
    analysis = analyze(root)
    assert findings(analysis) == missing_both("LlavaForConditionalGeneration")
    assert {f.provider.class_name for f in analysis.findings} == {"pkg.layers.causal_lm.CausalLMBase"}
    mixins = analysis.index.summary("pkg.layers.mixins")
    assert [d.name for d in mixins.deferred] == ["Unrelated", "Middle"] and mixins.parsed == {}
    middle = ClassKey("pkg.layers.mixins", "Middle")
    assert analysis.index.provision(middle, "cached").owner == middle  # a name it spells: parsed, and found
    assert [d.name for i, d in enumerate(mixins.deferred) if i in mixins.parsed] == ["Middle"]


def test_the_names_a_class_may_provide_span_its_mro_and_record_the_modules_its_bases_come_from(tmp_path):
    # The look for an inner model skips a class whose names lack the member: the set must hold what every base
    # defines, say "any name" under a forwarding ``__getattr__``, and charge the bases' modules to the check.
    root = base_tree(tmp_path, {
        "pkg/layers/__init__.py": "",
        "pkg/layers/causal_lm.py": CAUSAL_LM_BASE,
        "pkg/models/llama.py": """
            from pkg.layers.causal_lm import CausalLMBase

            class LlamaForCausalLM(CausalLMBase):
                def forward(self, x):
                    return x

            class Forwarding(LlamaForCausalLM):
                def __getattr__(self, name):
                    return getattr(self.model, name)
        """,
        "pkg/models/llava.py": wrapper("from pkg.models.llama import LlamaForCausalLM"),
    })
    index = analyze(root).index
    llama = ClassKey("pkg.models.llama", "LlamaForCausalLM")
    recorded = index.record()
    names = index.names(llama)
    assert index.stop(recorded) >= {"pkg.models.llama", "pkg.layers.causal_lm"}
    assert names is not None and {"forward", "get_embed_and_head"} <= names and "set_eagle3" not in names
    recorded = index.record()
    assert index.names(llama) is names  # a hit charges the same modules
    assert index.stop(recorded) >= {"pkg.models.llama", "pkg.layers.causal_lm"}
    assert index.names(ClassKey("pkg.models.llama", "Forwarding")) is None


def test_relative_import_from_the_same_package(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llava.py": wrapper("from .llama import LlamaForCausalLM")})
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_relative_import_from_the_parent_package(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llava.py": wrapper("from ..models.llama import LlamaForCausalLM")})
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_relative_import_two_levels_up_from_a_subpackage(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/vlm/__init__.py": "",
        "pkg/models/vlm/llava.py": wrapper("from ...models.llama import LlamaForCausalLM"),
    })
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_import_module_as_alias_then_attribute_call(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/llava.py": wrapper("import pkg.models.llama as llama_mod", callee="llama_mod.LlamaForCausalLM"),
    })
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_plain_import_of_a_dotted_module_then_full_path_call(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/llava.py": wrapper("import pkg.models.llama", callee="pkg.models.llama.LlamaForCausalLM"),
    })
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_reexport_through_a_package_init(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/text/__init__.py": "from .llama import LlamaForCausalLM\n",
        "pkg/models/text/llama.py": LLAMA,
        "pkg/models/llama.py": "",
        "pkg/models/llava.py": wrapper("from pkg.models.text import LlamaForCausalLM"),
    })
    analysis = analyze(root)
    assert findings(analysis) == missing_both("LlavaForConditionalGeneration")
    assert {f.provider.class_name for f in analysis.findings} == {"pkg.models.text.llama.LlamaForCausalLM"}


def test_reexport_through_star_import_and_module_level_alias(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/text/__init__.py": "from .llama import *\n",
        "pkg/models/text/llama.py": LLAMA,
        "pkg/models/aliases.py": """
            from pkg.models import text

            Llama = text.LlamaForCausalLM
        """,
        "pkg/models/llama.py": "",
        "pkg/models/llava.py": wrapper("from pkg.models.aliases import Llama", callee="Llama"),
    })
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_namespace_package_directories_without_init(tmp_path):
    """SGLang's ``srt`` and ``srt/models`` have no ``__init__.py``; names still resolve from the top package."""
    worker = "sgl/srt/speculative/eagle_worker.py"
    root = make_tree(tmp_path, {
        "sgl/__init__.py": "",
        worker: EAGLE_WORKER,
        "sgl/srt/models/llama.py": LLAMA,
        "sgl/srt/models/llava.py": wrapper("from sgl.srt.models.llama import LlamaForCausalLM"),
        "sgl/srt/models/llava_next.py": wrapper("from .llama import LlamaForCausalLM", name="LlavaNext"),
    })
    assert findings(analyze(root)) == (missing_both("LlavaForConditionalGeneration", worker=worker)
                                       + missing_both("LlavaNext", worker=worker))


def test_tree_without_any_init_names_modules_from_the_root(tmp_path):
    worker = "srt/speculative/eagle_worker.py"
    root = make_tree(tmp_path, {
        worker: EAGLE_WORKER,
        "srt/models/llama.py": LLAMA,
        "srt/models/llava.py": wrapper("from srt.models.llama import LlamaForCausalLM"),
    })
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration", worker=worker)


def test_inheritance_cycle_across_files_does_not_crash(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/cycle_a.py": """
            from pkg.models.cycle_b import CycleB
            from pkg.models.llama import LlamaForCausalLM

            class CycleA(CycleB):
                def __init__(self, config):
                    self.language_model = LlamaForCausalLM(config)

            EntryClass = CycleA
        """,
        "pkg/models/cycle_b.py": """
            from pkg.models.cycle_a import CycleA

            class CycleB(CycleA):
                def get_embed_and_head(self):
                    return self.language_model.get_embed_and_head()

            EntryClass = CycleB
        """,
    })
    analysis = analyze(root)
    assert findings(analysis) == [
        ("SC005", "CycleA", "set_embed_and_head", ("draft",), "language_model", "LlamaForCausalLM", "warning", (DRAFT_SITE,)),
        ("SC005", "CycleB", "set_embed_and_head", ("draft",), "language_model", "LlamaForCausalLM", "warning", (DRAFT_SITE,)),
    ]


def test_class_that_names_itself_as_base_does_not_crash(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/selfish.py": """
        from pkg.models.llama import LlamaForCausalLM

        class Selfish(Selfish):
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

        EntryClass = Selfish
    """})
    assert findings(analyze(root)) == missing_both("Selfish")


def test_checking_the_package_directory_itself_keeps_full_module_names(tmp_path):
    """``spec-contract check …/site-packages/sglang``: names come from ``__init__.py`` packages upward."""
    base_tree(tmp_path, {"pkg/models/llava.py": wrapper("from pkg.models.llama import LlamaForCausalLM")})
    analysis = analyze(tmp_path / "pkg")
    assert [k.dotted for k in analysis.checked] == [
        "pkg.models.llama.LlamaForCausalLM", "pkg.models.llava.LlavaForConditionalGeneration"]
    assert findings(analysis) == [
        ("SC001", "LlavaForConditionalGeneration", "get_embed_and_head", ("target",), "language_model",
         "LlamaForCausalLM", "error", (("speculative/eagle_worker.py", 5, False),)),
        ("SC005", "LlavaForConditionalGeneration", "set_embed_and_head", ("draft",), "language_model",
         "LlamaForCausalLM", "warning", (("speculative/eagle_worker.py", 6, False),)),
    ]


def test_repository_checkout_layout_names_modules_from_the_outermost_package(tmp_path):
    """An SGLang checkout keeps the package in ``python/sglang``; its code imports ``sglang.srt...``."""
    worker = "python/sglang/srt/speculative/eagle_worker.py"
    root = make_tree(tmp_path, {
        "python/sglang/__init__.py": "",
        worker: EAGLE_WORKER,
        "python/sglang/srt/models/llama.py": LLAMA,
        "python/sglang/srt/models/llava.py": wrapper("from sglang.srt.models.llama import LlamaForCausalLM"),
        "test/srt/test_llava.py": "from sglang.srt.models.llava import LlavaForConditionalGeneration\n",
    })
    analysis = analyze(root)
    assert [k.dotted for k in analysis.checked] == [
        "sglang.srt.models.llama.LlamaForCausalLM", "sglang.srt.models.llava.LlavaForConditionalGeneration"]
    assert findings(analysis) == missing_both("LlavaForConditionalGeneration", worker=worker)


def test_unresolvable_relative_imports_and_bases_do_not_crash(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/deep.py": """
        from .....nowhere import Base
        from ...... import Other
        from pkg.models.llama import LlamaForCausalLM

        class Deep(Base, Other, object):
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

        EntryClass = Deep
    """})
    assert findings(analyze(root)) == missing_both("Deep")


@pytest.mark.parametrize(("import_line", "callee"), [
    ("from . import llama", "llama.LlamaForCausalLM"),
    ("from .. import models", "models.llama.LlamaForCausalLM"),
    ("from pkg.models import llama as L", "L.LlamaForCausalLM"),
])
def test_module_imported_by_relative_or_aliased_from_import(tmp_path, import_line, callee):
    root = base_tree(tmp_path, {"pkg/models/llava.py": wrapper(import_line, callee=callee)})
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_class_and_entry_defined_inside_try_and_if_blocks(tmp_path):
    root = base_tree(tmp_path, {"pkg/models/llava.py": """
        from pkg.models.llama import LlamaForCausalLM

        try:
            import flash_attn

            class LlavaForConditionalGeneration:
                def __init__(self, config):
                    self.language_model = LlamaForCausalLM(config)
        except ImportError:
            flash_attn = None

        if flash_attn is not None:
            EntryClass = [LlavaForConditionalGeneration]
    """})
    assert findings(analyze(root)) == missing_both("LlavaForConditionalGeneration")


def test_checking_a_namespace_subdirectory_of_a_package_keeps_full_module_names(tmp_path):
    """``spec-contract check python/sglang/srt``: ``srt`` has no ``__init__.py`` but ``sglang`` does."""
    root = make_tree(tmp_path, {
        "sgl/__init__.py": "",
        "sgl/srt/speculative/eagle_worker.py": EAGLE_WORKER,
        "sgl/srt/models/llama.py": LLAMA,
        "sgl/srt/models/llava.py": wrapper("from sgl.srt.models.llama import LlamaForCausalLM"),
    })
    analysis = analyze(root / "sgl" / "srt")
    assert [k.dotted for k in analysis.checked] == [
        "sgl.srt.models.llama.LlamaForCausalLM", "sgl.srt.models.llava.LlavaForConditionalGeneration"]
    assert findings(analysis) == missing_both("LlavaForConditionalGeneration", worker="speculative/eagle_worker.py")


def test_a_class_and_a_function_of_the_same_name_are_different_keys():
    # The index memoises by key; a function's answers must never be taken for a class's.
    from spec_contract.engine.resolve.index import FunctionKey

    assert ClassKey("pkg.m", "X") != FunctionKey("pkg.m", "X")
    assert len({ClassKey("pkg.m", "X"), FunctionKey("pkg.m", "X")}) == 2
