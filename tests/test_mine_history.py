"""benchmarks/mine_history.py on two tiny releases of our own: it finds the members upstream added, tells a
forward from an implementation, counts the forward the tool names (the Kimi-K2.5 shape) and compares the body
``check --fix`` writes with upstream's. The miner is
the acceptance test of issue 20; this keeps it running as the engine's interfaces change."""

from __future__ import annotations

import ast
import json
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import mine_history  # noqa: E402  (a script folder, not a package)

WORKER = """
    class EAGLEWorker:
        def __init__(self, target_worker, draft_model_runner):
            self.target_worker = target_worker
            embed, head = self.target_worker.model_runner.model.get_embed_and_head()
"""

LLAMA = """
    class LlamaForCausalLM:
        def __init__(self, config):
            self.config = config

        def get_embed_and_head(self):
            return None, None

    EntryClass = LlamaForCausalLM
"""

LLAVA = """
    from sglang.srt.models.llama import LlamaForCausalLM

    class Llava:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM(config)
    {fix}
    EntryClass = Llava
"""

GEMMA = """
    class GemmaModel:
        def __init__(self, config):
            self.embed_tokens = None

    class GemmaForCausalLM:
        def __init__(self, config):
            self.model = GemmaModel(config)
            self.lm_head = None
    {fix}
    EntryClass = GemmaForCausalLM
"""

FORWARD = """
        def get_embed_and_head(self):
            return self.language_model.get_embed_and_head()
"""

LLAVA_NEXT = """
    from sglang.srt.models.llama import LlamaForCausalLM

    class LlavaNext:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM(config)
    {fix}
    EntryClass = LlavaNext
"""

OWN_BODY = """
        def get_embed_and_head(self):
            embed = self.language_model.model.embed_tokens.weight
            return embed, self.language_model.lm_head.weight
"""

IMPLEMENT = """
        def get_embed_and_head(self):
            return self.model.embed_tokens.weight, self.lm_head.weight
"""


def release(root: Path, version: str, llava_fix: str = "", gemma_fix: str = "", next_fix: str = "") -> None:
    files = {
        "__init__.py": "", "srt/__init__.py": "", "srt/models/__init__.py": "", "srt/speculative/__init__.py": "",
        "srt/speculative/eagle_worker.py": WORKER, "srt/models/llama.py": LLAMA,
        "srt/models/llava.py": LLAVA.replace("{fix}", llava_fix),
        "srt/models/gemma.py": GEMMA.replace("{fix}", gemma_fix),
        "srt/models/llava_next.py": LLAVA_NEXT.replace("{fix}", next_fix),
    }
    for rel, text in files.items():
        path = root / f"sglang-{version}" / "sglang" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def test_the_miner_finds_upstream_fixes_and_which_the_tool_names(tmp_path, capsys):
    rel = tmp_path / "rel"
    release(rel, "1.0")
    release(rel, "1.1", llava_fix=FORWARD, gemma_fix=IMPLEMENT, next_fix=OWN_BODY)
    out = tmp_path / "fixes.json"
    assert mine_history.main([str(rel), "--releases", "1.0,1.1", "--cache", str(tmp_path / "cache"),
                              "--fixes", str(out), "--list"]) == 0
    fixes = json.loads(out.read_text())
    assert [(f["path"], f["class"], f["member"], f["kind"]) for f in fixes] == [
        ("srt/models/gemma.py", "GemmaForCausalLM", "get_embed_and_head", "implement"),
        ("srt/models/llava.py", "Llava", "get_embed_and_head", "forward"),
        ("srt/models/llava_next.py", "LlavaNext", "get_embed_and_head", "implement")]
    assert fixes[0]["upstream_attr_paths"] == {"read": ["self.lm_head.weight", "self.model.embed_tokens.weight"],
                                               "write": []}
    printed = capsys.readouterr().out
    assert "named forward   srt/models/llava.py::Llava.get_embed_and_head" in printed
    # upstream wrote a body of its own where check --fix writes a forward: named, and the bodies differ
    assert "named implement srt/models/llava_next.py::LlavaNext.get_embed_and_head  body differs" in printed
    # a second run reads the cache and prints the same table
    assert mine_history.main([str(rel), "--releases", "1.0,1.1", "--cache", str(tmp_path / "cache")]) == 0
    assert capsys.readouterr().out.strip() in printed


def test_a_path_read_through_a_local_is_the_same_path():
    """``text_config = self.config.text_config`` then ``text_config.num_hidden_layers`` reads what
    ``self.config.text_config.num_hidden_layers`` reads; a local assigned twice is no alias."""
    through_local = ast.parse(textwrap.dedent("""
        def f(self, layer_ids):
            text_config = self.config.text_config
            embed = self.language_model.embed_tokens.weight
            self.language_model.layers_to_capture = [text_config.num_hidden_layers - 3]
            return embed, embed
    """)).body[0]
    direct = ast.parse(textwrap.dedent("""
        def f(self, layer_ids):
            self.language_model.layers_to_capture = [self.config.text_config.num_hidden_layers - 3]
            return self.language_model.embed_tokens.weight, self.language_model.embed_tokens.weight
    """)).body[0]
    assert mine_history.attr_paths(through_local) == mine_history.attr_paths(direct) == {
        "read": ["self.config.text_config.num_hidden_layers", "self.language_model.embed_tokens.weight"],
        "write": ["self.language_model.layers_to_capture"]}
    twice = ast.parse("def f(self):\n    c = self.config\n    c = other\n    return c.x\n").body[0]
    assert mine_history.attr_paths(twice) == {"read": ["self.config"], "write": []}
