"""Fixing many classes of one file reads the file with libcst about once, not once per class (issue 38, item 6).

``--fix``, ``--diff`` and the editor's fix-all parsed the whole module with libcst and resolved its positions
again for every class they edited: 30 / 120 / 500 classes in one file took 0.6 / 7 / 249 s. Each class's own
statement is read now, so libcst's work grows with the file, not the file times its classes. Timings are for
``benchmarks/fix_bench.py``; this test counts what libcst is given to parse.
"""

from __future__ import annotations

import ast

import libcst
from spec_contract.engine import apply_edits, delegation_edits
from spec_contract.engine.config import load_config
from spec_contract.engine.project import Project
from spec_tree import write_tree

CLASSES = 40


def many(n: int) -> str:
    """One model file with ``n`` wrappers of the text model, none forwarding what the worker calls."""
    classes = "".join(f"\n\nclass Wrapper{i}:\n    def __init__(self, config):\n"
                      f"        self.language_model = LlamaForCausalLM()\n" for i in range(n))
    names = ", ".join(f"Wrapper{i}" for i in range(n))
    return f"from sglang.srt.models.llama import LlamaForCausalLM\n{classes}\n\nEntryClass = [{names}]\n"


def test_libcst_reads_each_class_once_not_the_file_once_per_class(tmp_path, monkeypatch):
    text = many(CLASSES)
    root = write_tree(tmp_path, {"srt/models/many.py": text})
    analysis = Project(root, load_config(root), use_cache=False).analyze()
    assert len({f.class_name for f in analysis.findings}) == CLASSES
    given: list[int] = []
    parse = libcst.parse_module

    def counted(source, *args, **kwargs):
        given.append(len(source))
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counted)
    fixes = delegation_edits(analysis, analysis.findings)
    assert not fixes.refused and len(fixes.edits) == CLASSES
    assert sum(given) < 2 * len(text), (len(given), sum(given), len(text))  # once per class: CLASSES times it
    fixed = apply_edits(text, fixes.edits)
    classes = [node for node in ast.parse(fixed).body if isinstance(node, ast.ClassDef)]
    assert all({"get_embed_and_head", "set_embed_and_head"} <= {f.name for f in cls.body} for cls in classes)
