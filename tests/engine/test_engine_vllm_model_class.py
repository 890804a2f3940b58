"""``initialize_model(vllm_config=…, model_class=X)``: a wrapper that names its language model's class to the
model loader builds an X (vLLM's Llama 4 wrapper does); without ``model_class`` the loader takes the class
from the HF config at run time, which no reading of the code can tell. The tree is test_engine_vllm's."""

from __future__ import annotations

from engine_trees import analyze
from spec_contract.engine.resolve.index import ClassKey
from test_engine_vllm import MODELS, codes, picture, vllm_tree

REGISTERED = 'init_vllm_registered_model(vllm_config=vllm_config, architectures=["TinyForCausalLM"])'
PICTURE = ClassKey("vllm.model_executor.models.picture", "PictureForConditionalGeneration")


def _loaded_by_the_model_loader(call: str, bases: str = "nn.Module, SupportsMultiModal") -> dict[str, str]:
    source = picture(bases=bases).replace(REGISTERED, call).replace(
        "from .utils import init_vllm_registered_model",
        "from .tiny import TinyForCausalLM\nfrom vllm.model_executor.model_loader import initialize_model")
    assert call in source
    return {f"{MODELS}/picture.py": source,
            "vllm/model_executor/model_loader.py": "def initialize_model(vllm_config, *, prefix='', model_class=None):\n"
                                                  "    return None\n"}


def test_the_class_named_to_the_model_loader_is_the_inner_model(tmp_path):
    files = _loaded_by_the_model_loader("initialize_model(vllm_config=vllm_config, model_class=TinyForCausalLM)")
    analysis = analyze(vllm_tree(tmp_path, files))
    assert analysis.index.delegates(PICTURE)["language_model"] == (
        ClassKey("vllm.model_executor.models.tiny", "TinyForCausalLM"),)
    # it declares nothing and its inner backs EAGLE-3: the not-declared warning, as for a registry-built one
    assert [c for c in codes(analysis) if c[1] == PICTURE.qualname] == [
        ("SC006", "PictureForConditionalGeneration", "SupportsEagle3", "warning")]


def test_without_a_named_class_the_model_loaders_choice_is_unverifiable(tmp_path):
    files = _loaded_by_the_model_loader("initialize_model(vllm_config=vllm_config)",
                                        bases="nn.Module, SupportsMultiModal, SupportsEagle3")
    analysis = analyze(vllm_tree(tmp_path, files))
    assert [(f.code, f.severity) for f in analysis.findings if f.class_name == PICTURE.qualname] == [
        ("SC008", "information")]
