"""benchmarks/mine_history.py on tiny releases of our own: it finds the members upstream added, tells a
forward from an implementation, counts the forward the tool names (the Kimi-K2.5 shape) and compares the body
``check --fix`` writes with upstream's; it counts a fix only where the older release's use reaches the class
(a same-named new class, a refactor and a use that arrived with the member are excluded, each by its rule);
and it mines vLLM's layout, where a capability added to a class's bases is a fix too. The miner is the
acceptance test of issues 20 and 36; this keeps it running as the engine's interfaces change."""

from __future__ import annotations

import ast
import json
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import history_fixes  # noqa: E402  (a script folder, not a package)
import history_upstream  # noqa: E402
import mine_history  # noqa: E402

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


def write(root: Path, engine: str, version: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / f"{engine}-{version}" / engine / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def release(root: Path, version: str, llava_fix: str = "", gemma_fix: str = "", next_fix: str = "") -> None:
    write(root, "sglang", version, {
        "__init__.py": "", "srt/__init__.py": "", "srt/models/__init__.py": "", "srt/speculative/__init__.py": "",
        "srt/speculative/eagle_worker.py": WORKER, "srt/models/llama.py": LLAMA,
        "srt/models/llava.py": LLAVA.replace("{fix}", llava_fix),
        "srt/models/gemma.py": GEMMA.replace("{fix}", gemma_fix),
        "srt/models/llava_next.py": LLAVA_NEXT.replace("{fix}", next_fix),
    })


def test_the_miner_finds_upstream_fixes_and_which_the_tool_names(tmp_path, capsys):
    rel = tmp_path / "rel"
    release(rel, "1.0")
    release(rel, "1.1", llava_fix=FORWARD, gemma_fix=IMPLEMENT, next_fix=OWN_BODY)
    out = tmp_path / "fixes.json"
    assert mine_history.main([str(rel), "--engine", "sglang", "--releases", "1.0,1.1", "--cache",
                              str(tmp_path / "cache"), "--fixes", str(out), "--list"]) == 0
    fixes = json.loads(out.read_text())
    assert [(f["path"], f["class"], f["member"], f["kind"]) for f in fixes] == [
        ("srt/models/gemma.py", "GemmaForCausalLM", "get_embed_and_head", "implement"),
        ("srt/models/llava.py", "Llava", "get_embed_and_head", "forward"),
        ("srt/models/llava_next.py", "LlavaNext", "get_embed_and_head", "implement")]
    assert fixes[0]["upstream_attr_paths"] == {"read": ["self.lm_head.weight", "self.model.embed_tokens.weight"],
                                               "write": []}
    printed = capsys.readouterr().out
    assert "named forward   srt/models/llava.py::Llava.get_embed_and_head  [target] older: " \
        "srt/speculative/eagle_worker.py:4 `embed, head = self.target_worker.model_runner.model.get_embed_and_head()`" \
        in printed
    # upstream wrote a body of its own where check --fix writes a forward: named, and the bodies differ
    assert "named implement srt/models/llava_next.py::LlavaNext.get_embed_and_head  body differs" in printed
    # a second run reads the cache and prints the same table
    assert mine_history.main([str(rel), "--engine", "sglang", "--releases", "1.0,1.1", "--cache",
                              str(tmp_path / "cache")]) == 0
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
    assert history_upstream.attr_paths(through_local) == history_upstream.attr_paths(direct) == {
        "read": ["self.config.text_config.num_hidden_layers", "self.language_model.embed_tokens.weight"],
        "write": ["self.language_model.layers_to_capture"]}
    twice = ast.parse("def f(self):\n    c = self.config\n    c = other\n    return c.x\n").body[0]
    assert history_upstream.attr_paths(twice) == {"read": ["self.config"], "write": []}


# --- the reach rules: a fix counts only where the older release's use reaches the older class ---------------
REACH_WORKER = """
    class EAGLEWorker:
        def __init__(self, target_worker, draft_model_runner):
            self.target_worker = target_worker
            embed, head = self.target_worker.model_runner.model.get_embed_and_head()
            {uses}
"""
OLDER_USES = "draft_model_runner.model.capture_aux()"
NEWER_USES = "self.target_worker.model_runner.model.capture_aux()\n            " \
    "self.target_worker.model_runner.model.set_hidden_cache()"

OLD_PHI = """
    class Phi:
        def __init__(self, config, prefix=""):
            self.config = config
            self.scale = config.scale

        def rescale(self, x):
            return x * self.scale

    EntryClass = Phi
"""
# another class under the old name: other bases, no line of the old body
NEW_PHI = """
    class PhiBase:
        pass

    class Phi(PhiBase):
        def __init__(self, config):
            self.model = object()
            self.lm_head = None

        def get_embed_and_head(self):
            return self.model.embed_tokens.weight, self.lm_head.weight

    EntryClass = Phi
"""
# the member moves from the base into the class: the older class had it all along
MISTRAL = """
    class MistralBase:
        def __init__(self, config):
            self.model = object()
            self.lm_head = None
    {base}

    class Mistral(MistralBase):
        def rotary(self, x):
            return x
    {own}
    EntryClass = Mistral
"""
# gains the member the older contract held for its role (the fix), and two whose use arrived with them: one
# the older contract held for the draft only, which the newer worker calls on the target instead, and one no
# older worker called
QWEN = """
    class Qwen:
        def __init__(self, config):
            self.model = object()
            self.lm_head = None
    {fix}
    EntryClass = Qwen
"""
# a class written ahead of its registry entry: no run of the older release builds it
UNREGISTERED = """
    class Unregistered:
        def __init__(self, config):
            self.model = object()
            self.lm_head = None
    {fix}
"""
# an inner decoder that gains the member its holder had done in its own body: no worker call reached it
HELD = """
    class DecoderModel:
        def __init__(self, config):
            self.embed_tokens = None
    {inner}

    class Decoder:
        def __init__(self, config):
            self.model = DecoderModel(config)
            self.lm_head = None

        def get_embed_and_head(self):
            return {outer}


    EntryClass = Decoder
"""
HELD_OLD = HELD.replace("{inner}", "").replace("{outer}", "self.model.embed_tokens.weight, self.lm_head.weight")
HELD_NEW = HELD.replace("{inner}", """
        def get_embed_and_head(self):
            return self.embed_tokens.weight, None
""").replace("{outer}", "self.model.get_embed_and_head()[0], self.lm_head.weight")
QWEN_FIX = IMPLEMENT + """
        def capture_aux(self):
            self.model.capture = True

        def set_hidden_cache(self):
            self.model.cache = True
"""


def test_only_fixes_the_older_release_reaches_are_counted_and_each_exclusion_says_its_rule(tmp_path, capsys):
    rel = tmp_path / "rel"
    common = {"__init__.py": "", "srt/__init__.py": "", "srt/models/__init__.py": "",
              "srt/speculative/__init__.py": ""}
    write(rel, "sglang", "1.0", {**common, "srt/speculative/eagle_worker.py": REACH_WORKER.replace("{uses}", OLDER_USES),
                                 "srt/models/phi.py": OLD_PHI, "srt/models/qwen.py": QWEN.replace("{fix}", ""),
                                 "srt/models/unregistered.py": UNREGISTERED.replace("{fix}", ""),
                                 "srt/models/decoder.py": HELD_OLD,
                                 "srt/models/mistral.py": MISTRAL.replace("{base}", IMPLEMENT).replace("{own}", "")})
    write(rel, "sglang", "1.1", {**common, "srt/speculative/eagle_worker.py": REACH_WORKER.replace("{uses}", NEWER_USES),
                                 "srt/models/phi.py": NEW_PHI, "srt/models/qwen.py": QWEN.replace("{fix}", QWEN_FIX),
                                 "srt/models/unregistered.py": UNREGISTERED.replace("{fix}", IMPLEMENT),
                                 "srt/models/decoder.py": HELD_NEW,
                                 "srt/models/mistral.py": MISTRAL.replace("{base}", "").replace("{own}", IMPLEMENT)})
    fixes, excluded = tmp_path / "fixes.json", tmp_path / "excluded.json"
    assert mine_history.main([str(rel), "--engine", "sglang", "--releases", "1.0,1.1", "--cache", str(tmp_path / "c"),
                              "--fixes", str(fixes), "--excluded", str(excluded), "--list"]) == 0
    assert [(f["class"], f["member"], f["kind"], f["roles"]) for f in json.loads(fixes.read_text())] == [
        ("Qwen", "get_embed_and_head", "implement", ["target"])]
    assert {(e["class"], e["member"]): (e["rule"], e["why"]) for e in json.loads(excluded.read_text())} == {
        ("Phi", "get_embed_and_head"): (
            "new class", "0% of the smaller class's lines shared, bases [] -> ['PhiBase']"),
        ("Mistral", "get_embed_and_head"): ("refactor", "the older class had it from MistralBase"),
        ("Unregistered", "get_embed_and_head"): ("unbuilt", "no class the older release registers is, derives from or holds it"),
        ("Qwen", "capture_aux"): ("arrived", "the older contract holds it for draft, the newer for target"),
        ("Qwen", "set_hidden_cache"): ("arrived", "the older contract holds it for no role, the newer for target"),
        ("DecoderModel", "get_embed_and_head"): (
            "unreached", "only held (by Decoder), and no holder's `get_embed_and_head` hands the call to it")}
    printed = capsys.readouterr().out
    assert "  excluded refactor   srt/models/mistral.py::Mistral.get_embed_and_head: the older class had it from " \
        "MistralBase" in printed
    # the row: 7 candidates; new class 1, unbuilt 1, refactor 1, arrived 2, folded 0, unreached 1; 1 fix
    row = next(line for line in printed.splitlines() if line.startswith("1.0->1.1")).split()
    assert row[1:9] == ["7", "1", "1", "1", "2", "0", "1", "1"]


def test_a_class_that_keeps_most_of_its_lines_is_the_same_class_though_its_bases_and_file_changed():
    """Identity: a moved class whose bases were rewritten is still the class when it keeps at least half of
    the smaller body's lines (the refactor that put it on a new base); a share below that is another class."""
    older = {"a.py": {"classes": {"C": {}}, "bases": {"C": ["Old"]}, "fingerprint": {"C": ["1", "2", "3", "4"]},
                      "names": []}}
    newer = {"b.py": {"classes": {"C": {"m": {"paths": {"read": [], "write": []}}}}, "bases": {"C": ["New"]},
                      "fingerprint": {"C": ["1", "2", "9"]}, "names": []}}
    [candidate] = history_fixes.candidates(older, newer, {"m"}, {})
    assert (candidate["older_path"], candidate["path"]) == ("a.py", "b.py")
    assert history_fixes.shared(older, newer, candidate) == 2 / 3
    newer["b.py"]["fingerprint"]["C"] = ["1", "8", "9"]
    assert history_fixes.shared(older, newer, candidate) == 1 / 3


# --- vLLM's layout: models in model_executor/models/, classes from its registry, a gated Protocol -------------
VLLM_INTERFACES = """
    from typing import ClassVar, Literal, Protocol, runtime_checkable


    class EagleModelMixin:
        aux_layers: tuple = ()


    @runtime_checkable
    class SupportsEagle3(Protocol):
        supports_eagle3: ClassVar[Literal[True]] = True

        def set_aux_hidden_state_layers(self, layers):
            owner = self.get_language_model() if hasattr(self, "get_language_model") else self
            holder = getattr(owner, "model", owner)
            assert isinstance(holder, EagleModelMixin)
            holder.aux_layers = layers

        def get_eagle3_default_aux_hidden_state_layers(self):
            return (2,)


    def supports_eagle3(model):
        return isinstance(model, SupportsEagle3)
"""
VLLM_REGISTRY = """
    _TEXT_GENERATION_MODELS = {
        "DenseForCausalLM": ("dense", "DenseForCausalLM"),
        "SparseForCausalLM": ("sparse", "SparseForCausalLM"),
    }
    _MULTIMODAL_MODELS = {
        "VisionForConditionalGeneration": ("vision", "VisionForConditionalGeneration"),
    }
    _SPECULATIVE_DECODING_MODELS = {
        "EagleDenseForCausalLM": ("dense_eagle", "EagleDenseForCausalLM"),
    }
"""
VLLM_RUNNER = """
    from vllm.model_executor.models.interfaces import supports_eagle3


    class GPUModelRunner:
        def load_model(self):
            if self.use_aux_hidden_state_outputs:
                self.setup_aux()

        def setup_aux(self):
            if not supports_eagle3(self.get_model()):
                raise RuntimeError("the model does not support EAGLE3")
            self.model.set_aux_hidden_state_layers(self.model.get_eagle3_default_aux_hidden_state_layers())
"""
VLLM_PROPOSER = """
    class EagleProposer:
        def propose(self, ids):
            return self.model.embed_input_ids(ids)
"""
# the language model a wrapper holds: declares EAGLE-3 and backs it with its decoder
DENSE = """
    import torch.nn as nn

    from .interfaces import EagleModelMixin, SupportsEagle3


    class DenseModel(nn.Module, EagleModelMixin):
        def embed_input_ids(self, ids):
            return ids


    class DenseForCausalLM(nn.Module, SupportsEagle3):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.model = DenseModel()
            self.lm_head = None

        def embed_input_ids(self, ids):
            return self.model.embed_input_ids(ids)
"""
# a wrapper whose language model backs EAGLE-3: the newer release declares it (the tool names it)
VISION = """
    import torch.nn as nn

    from .dense import DenseForCausalLM
    from .interfaces import SupportsEagle3


    class VisionForConditionalGeneration({bases}):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.language_model = DenseForCausalLM(vllm_config=vllm_config)

        def get_language_model(self):
            return self.language_model
"""
# support written for the newer release: the class declares it and its decoder becomes the mixin (one fix)
SPARSE = """
    import torch.nn as nn

    from .interfaces import EagleModelMixin, SupportsEagle3


    class SparseModel({model_bases}):
        def embed_input_ids(self, ids):
            return ids


    class SparseForCausalLM({bases}):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.model = SparseModel()
            self.lm_head = None

        def embed_input_ids(self, ids):
            return self.model.embed_input_ids(ids)
"""
# a draft head that forgot to forward the draft's embed_input_ids to its decoder
DENSE_EAGLE = """
    import torch.nn as nn

    from .dense import DenseModel


    class EagleDenseForCausalLM(nn.Module):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.model = DenseModel()
            self.lm_head = None
    {fix}
"""
EAGLE_FORWARD = """
        def embed_input_ids(self, ids):
            return self.model.embed_input_ids(ids)
"""


def vllm_release(rel: Path, version: str, fixed: bool) -> None:
    models = "model_executor/models"
    write(rel, "vllm", version, {
        "__init__.py": "", "model_executor/__init__.py": "", f"{models}/__init__.py": "",
        "v1/__init__.py": "", "v1/spec_decode/__init__.py": "", "v1/worker/__init__.py": "",
        f"{models}/interfaces.py": VLLM_INTERFACES, f"{models}/registry.py": VLLM_REGISTRY,
        "v1/worker/gpu_model_runner.py": VLLM_RUNNER, "v1/spec_decode/eagle.py": VLLM_PROPOSER,
        f"{models}/dense.py": DENSE,
        f"{models}/vision.py": VISION.format(bases="nn.Module, SupportsEagle3" if fixed else "nn.Module"),
        f"{models}/sparse.py": SPARSE.format(model_bases="nn.Module, EagleModelMixin" if fixed else "nn.Module",
                                            bases="nn.Module, SupportsEagle3" if fixed else "nn.Module"),
        f"{models}/dense_eagle.py": DENSE_EAGLE.replace("{fix}", EAGLE_FORWARD if fixed else ""),
    })


def test_vllm_releases_are_mined_from_their_own_layout_and_a_declared_capability_is_a_fix(tmp_path, capsys):
    rel = tmp_path / "rel"
    vllm_release(rel, "1.0", fixed=False)
    vllm_release(rel, "1.1", fixed=True)
    fixes, excluded = tmp_path / "fixes.json", tmp_path / "excluded.json"
    assert mine_history.main([str(rel), "--engine", "vllm", "--releases", "1.0,1.1", "--cache", str(tmp_path / "c"),
                              "--fixes", str(fixes), "--excluded", str(excluded), "--list"]) == 0
    found = {(f["path"], f["class"], f["member"]): f for f in json.loads(fixes.read_text())}
    assert {key: (f["kind"], f["roles"], [s["line"] for s in f["older_sites"]]) for key, f in found.items()} == {
        ("model_executor/models/dense_eagle.py", "EagleDenseForCausalLM", "embed_input_ids"): ("forward", ["draft"], [3]),
        ("model_executor/models/vision.py", "VisionForConditionalGeneration", "SupportsEagle3"): (
            "declare", ["target"], [10]),
        ("model_executor/models/sparse.py", "SparseForCausalLM", "SupportsEagle3"): ("declare", ["target"], [10])}
    # the wrapper whose language model backs EAGLE-3 is named by the tool on the older release
    assert found[("model_executor/models/vision.py", "VisionForConditionalGeneration", "SupportsEagle3")]["named"]
    assert found[("model_executor/models/sparse.py", "SparseForCausalLM", "SupportsEagle3")]["older_sites"][0][
        "text"] == "if not supports_eagle3(self.get_model()):"
    # the decoder's mixin is part of the declaration written in the same file: counted once, as that fix
    assert [(e["class"], e["member"], e["rule"]) for e in json.loads(excluded.read_text())] == [
        ("SparseModel", "EagleModelMixin", "folded")]
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == "vllm 1.0 -> 1.1"
    assert "vllm: named " in printed
