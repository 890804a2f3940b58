"""Files the engine cannot or can only partly read never stop a run, and never hide findings elsewhere."""

from __future__ import annotations

import os

from engine_trees import WORKER, analyze, base_tree, findings
from spec_contract.engine.read.files import MAX_FILE_BYTES

WRAPPER = """
    from pkg.models.llama import LlamaForCausalLM

    class LlavaForConditionalGeneration:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM(config)

    EntryClass = LlavaForConditionalGeneration
"""

MISSING_BOTH = [
    ("SC001", "LlavaForConditionalGeneration", "get_embed_and_head", ("target",), "language_model",
     "LlamaForCausalLM", "error", ((WORKER, 5, False),)),
    ("SC005", "LlavaForConditionalGeneration", "set_embed_and_head", ("draft",), "language_model",
     "LlamaForCausalLM", "warning", ((WORKER, 6, False),)),
]


def test_syntax_error_in_another_model_file_is_counted_and_skipped(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/llava.py": WRAPPER,
        "pkg/models/broken.py": """
            class Broken(:
                pass

            EntryClass = Broken
        """,
    })
    analysis = analyze(root, problems={"pkg/models/broken.py": "SyntaxError"})
    assert findings(analysis) == MISSING_BOTH
    assert analysis.stats.files_skipped == {"syntax-error": 1}


def test_syntax_error_in_another_worker_file_keeps_the_contract_of_the_others(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/llava.py": WRAPPER,
        "pkg/speculative/broken_worker.py": "def run(self:\n    self.target_worker.model_runner.model.x()\n",
    })
    analysis = analyze(root, problems={"pkg/speculative/broken_worker.py": "SyntaxError"})
    assert findings(analysis) == MISSING_BOTH
    assert analysis.stats.files_skipped == {"syntax-error": 1}


def test_binary_file_named_py_is_skipped(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/llava.py": WRAPPER,
        "pkg/models/weights.py": b"\x00\x01EntryClass\x00\xff\xfe" * 16,
        "pkg/speculative/blob.py": b"\x7fELF\x00\x00\x00",
    })
    analysis = analyze(root, problems={"pkg/models/weights.py": "binary", "pkg/speculative/blob.py": "binary"})
    assert findings(analysis) == MISSING_BOTH
    assert analysis.stats.files_skipped == {"binary": 2}


def test_latin1_file_with_a_coding_cookie_is_still_analysed(tmp_path):
    text = (
        "# -*- coding: latin-1 -*-\n"
        "# Modèle multimodal: enveloppe autour de Llama (é, ü, ß)\n"
        "from pkg.models.llama import LlamaForCausalLM\n"
        "\n"
        "class LlavaForConditionalGeneration:\n"
        "    def __init__(self, config):\n"
        "        self.légende = 'ça'\n"
        "        self.language_model = LlamaForCausalLM(config)\n"
        "\n"
        "EntryClass = LlavaForConditionalGeneration\n"
    )
    root = base_tree(tmp_path, {"pkg/models/llava.py": text.encode("latin-1")})
    analysis = analyze(root)
    assert findings(analysis) == MISSING_BOTH
    assert analysis.findings[0].span.line == 4
    assert analysis.stats.files_skipped == {}


def test_non_utf8_file_without_a_cookie_is_skipped_as_undecodable(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/llava.py": WRAPPER,
        "pkg/models/legacy.py": "# Modèle\nclass Legacy:\n    pass\nEntryClass = Legacy\n".encode("latin-1"),
    })
    analysis = analyze(root, problems={"pkg/models/legacy.py": "undecodable"})
    assert findings(analysis) == MISSING_BOTH


def test_call_site_columns_count_code_points_after_non_ascii_text(tmp_path):
    line = 'ñé = "ü"; embed = self.target_worker.model_runner.model.get_embed_and_head()'
    root = base_tree(tmp_path, {WORKER: f"""
        class Worker:
            def run(self):
                {line}
    """})
    analysis = analyze(root)
    (site,) = analysis.contract.get("target", "get_embed_and_head").call_sites
    start = 8 + line.index("get_embed_and_head")
    assert (site.span.line, site.span.col, site.span.end_col) == (2, start, start + len("get_embed_and_head"))
    assert site.text == line


def test_file_larger_than_the_limit_is_skipped_as_too_large(tmp_path):
    big = b"EntryClass = []\n" + b"#" * MAX_FILE_BYTES + b"\n"
    root = base_tree(tmp_path, {"pkg/models/llava.py": WRAPPER, "pkg/models/generated_tables.py": big})
    analysis = analyze(root, problems={"pkg/models/generated_tables.py": "too-large"})
    assert findings(analysis) == MISSING_BOTH
    assert analysis.stats.files_skipped == {"too-large": 1}


def test_symlink_loop_and_excluded_directories_are_not_walked_twice(tmp_path):
    root = base_tree(tmp_path, {
        "pkg/models/llava.py": WRAPPER,
        "build/lib/pkg/models/llava.py": WRAPPER,
        ".venv/lib/pkg/models/llava.py": WRAPPER,
    })
    os.symlink(root / "pkg", root / "pkg" / "models" / "loop")
    analysis = analyze(root)
    assert findings(analysis) == MISSING_BOTH
    assert [k.dotted for k in analysis.checked] == [
        "pkg.models.llama.LlamaForCausalLM", "pkg.models.llava.LlavaForConditionalGeneration"]
