"""vLLM wrapper shapes whose language model is found only by following the release's code: a config that
names its architectures literally (``with_hf_config(..., architectures=[...])``), a per-platform package
(each platform's wrapper against its own platform's language model), a registered dispatcher
whose ``__new__`` builds a version class that makes its language model in ``init_llm()``, and a decoder whose
own ``forward`` drops the aux hidden states (no declaration is offered then: it would only move the crash).

The trees are the small vLLM-shaped ones of ``test_engine_vllm``, with one model file per shape.
"""

from __future__ import annotations

import textwrap

import pytest
from engine_trees import analyze, line_of
from spec_contract.engine import parallel
from spec_contract.engine.edits.fix import declaration_edits
from spec_contract.engine.resolve.index import ClassKey
from spec_contract.engine.summarise import summaries as summaries_module
from test_engine_vllm import MODELS, REGISTRY, TINY, picture, vllm_tree


def _wrapper_findings(analysis, prefix: str) -> list[tuple[str, str, str | None, str]]:
    return sorted((f.code, f.class_name, f.delegate, f.inner_class) for f in analysis.findings
                  if f.class_name.startswith(prefix))


LITERAL = ('SC006', 'PictureForConditionalGeneration', 'language_model.model', 'TinyForCausalLM')


def test_a_config_naming_its_architectures_builds_that_architecture(tmp_path):
    # vLLM's Kimi-Audio: init_vllm_registered_model(vllm_config=vllm_config.with_hf_config(cfg, architectures=[...]))
    build = 'vllm_config=vllm_config.with_hf_config(vllm_config.hf_config, architectures=["TinyForCausalLM"])'
    text = picture(build="prefix=prefix").replace("vllm_config=vllm_config, prefix=prefix", f"{build}, prefix=prefix")
    analysis = analyze(vllm_tree(tmp_path, {f"{MODELS}/picture.py": text}))
    assert _wrapper_findings(analysis, "Picture") == [LITERAL]


def test_a_local_config_naming_its_architectures_builds_that_architecture(tmp_path):
    text = picture(build="prefix=prefix").replace(
        "        with self._mark_language_model(vllm_config):\n",
        '        text_config = vllm_config.with_hf_config(vllm_config.hf_config, architectures=["TinyForCausalLM"])\n'
        "        with self._mark_language_model(vllm_config):\n").replace(
        "init_vllm_registered_model(vllm_config=vllm_config, prefix=prefix)",
        "init_vllm_registered_model(vllm_config=text_config, prefix=prefix)")
    analysis = analyze(vllm_tree(tmp_path, {f"{MODELS}/picture.py": text}))
    assert _wrapper_findings(analysis, "Picture") == [LITERAL]


def test_a_config_whose_architectures_the_method_sets_builds_that_architecture(tmp_path):
    # vLLM's Llava for the HF-format Pixtral-12B: `config.text_config.architectures = ["MistralForCausalLM"]`
    # when the checkpoint names none, then init_vllm_registered_model(hf_config=config.text_config)
    text = picture(build="hf_config=config.text_config").replace(
        "        with self._mark_language_model(vllm_config):\n",
        "        config = vllm_config.hf_config\n"
        "        if config.text_config.architectures is None:\n"
        '            config.text_config.architectures = ["TinyForCausalLM"]\n'
        "        with self._mark_language_model(vllm_config):\n")
    analysis = analyze(vllm_tree(tmp_path, {f"{MODELS}/picture.py": text}))
    assert _wrapper_findings(analysis, "Picture") == [LITERAL]


def test_a_config_with_no_literal_architectures_stays_unknown(tmp_path):
    text = picture(build="prefix=prefix").replace(
        "vllm_config=vllm_config, prefix=prefix",
        "vllm_config=vllm_config.with_hf_config(vllm_config.hf_config, architectures=names), prefix=prefix")
    analysis = analyze(vllm_tree(tmp_path, {f"{MODELS}/picture.py": text}))
    assert _wrapper_findings(analysis, "Picture") == []


DISPATCH = """
    import torch.nn as nn

    from .interfaces import SupportsMultiModal
    from .plain import PlainForCausalLM
    from .tiny import TinyForCausalLM


    class DispatchBase(nn.Module, SupportsMultiModal):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            with self._mark_language_model(vllm_config):
                self.llm = self.init_llm(vllm_config=vllm_config, prefix=prefix)

        def init_llm(self, vllm_config, prefix=""):
            raise NotImplementedError


    class DispatchV2(DispatchBase):
        def init_llm(self, vllm_config, prefix=""):
            return TinyForCausalLM(vllm_config=vllm_config, prefix=prefix)


    class DispatchV3(DispatchBase):
        def init_llm(self, vllm_config, prefix=""):
            return PlainForCausalLM(vllm_config=vllm_config, prefix=prefix)


    _VERSIONS = {(2, 0): DispatchV2, (3, 0): DispatchV3}


    class Dispatch(DispatchBase):
        def __new__(cls, *, vllm_config, prefix=""):
            instance_cls = _VERSIONS.get(vllm_config.version)
            if instance_cls is None:
                raise ValueError("unsupported version")
            return instance_cls(vllm_config=vllm_config, prefix=prefix)
"""


def test_the_version_classes_a_dispatcher_builds_are_checked_instead_of_it(tmp_path):
    # vLLM's MiniCPMV: the registry names the dispatcher, whose __new__ returns a version class built from a
    # dict; each version builds its language model in init_llm(). Tiny backs EAGLE-3 (SC006 for V2); Plain
    # declares it without a mixin decoder, so V3 gets nothing, and the dispatcher, never what runs, nothing.
    registry = REGISTRY.replace('"PictureForConditionalGeneration": ("picture", "PictureForConditionalGeneration"),',
                                '"PictureForConditionalGeneration": ("picture", "PictureForConditionalGeneration"),\n'
                                '        "Dispatch": ("dispatch", "Dispatch"),')
    analysis = analyze(vllm_tree(tmp_path, {f"{MODELS}/dispatch.py": DISPATCH, f"{MODELS}/registry.py": registry}))
    assert _wrapper_findings(analysis, "Dispatch") == [("SC006", "DispatchV2", "llm.model", "TinyForCausalLM")]
    assert {k.qualname for k in analysis.checked} >= {"DispatchV2", "DispatchV3"}
    assert "Dispatch" not in {k.qualname for k in analysis.checked}


DEEPSTACK = TINY + """

    class DeepstackModel(TinyModel):
        def forward(self, input_ids, positions, deepstack=None):
            hidden_states = self.embed(input_ids)
            for layer in self.layers:
                hidden_states = layer(hidden_states, positions)
            hidden_states = self.norm(hidden_states)
            return hidden_states


    class DeepstackForCausalLM(TinyForCausalLM):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__(vllm_config=vllm_config, prefix=prefix)
            self.model = DeepstackModel()
            self.norm = nn.LayerNorm(8)

        def forward(self, input_ids, positions):
            return self.model(input_ids, positions)
"""


def test_no_declaration_is_offered_when_the_language_model_decoder_drops_the_aux_outputs(tmp_path):
    # vLLM's Granite4Vision: the language model declares EAGLE-3 through its base, but its decoder's own
    # forward returns only the hidden states; declaring on the wrapper would turn a clean refusal into the
    # model runner's unpack error, so SC009 says that and offers nothing to apply.
    text = picture(build='architectures=["DeepstackForCausalLM"]')
    registry = REGISTRY.replace('"TinyForCausalLM": ("tiny", "TinyForCausalLM"),',
                                '"TinyForCausalLM": ("tiny", "TinyForCausalLM"),\n'
                                '        "DeepstackForCausalLM": ("tiny", "DeepstackForCausalLM"),')
    root = vllm_tree(tmp_path, {f"{MODELS}/tiny.py": DEEPSTACK, f"{MODELS}/picture.py": text,
                                f"{MODELS}/registry.py": registry})
    analysis = analyze(root)
    found = [f for f in analysis.findings if f.class_name == "PictureForConditionalGeneration"]
    assert [(f.code, f.severity, f.inner_class) for f in found] == [("SC009", "warning", "DeepstackModel")]
    line = line_of(root, f"{MODELS}/tiny.py", "return hidden_states")
    assert found[0].message == (
        "`PictureForConditionalGeneration` does not declare `SupportsEagle3` while "
        "`self.language_model` (DeepstackForCausalLM) declares it; a EAGLE3 run is refused only after loading the "
        "weights by the "
        "check at vllm/v1/worker/gpu_model_runner.py:10; declaring it is not enough: once declared, "
        "`DeepstackModel.forward` drops the aux hidden states; `return hidden_states` "
        f"({MODELS}/tiny.py:{line}) is not the `(hidden, aux)` pair the aux layers ask of it (it is the holder), "
        "and a run then fails at the first forward, where the model runner unpacks `hidden_states, "
        "aux_hidden_states` from the model's output")
    assert declaration_edits(analysis, found).edits == ()
    # hover's status says the same: refused, and why declaring would not do
    status = analysis.status_of(ClassKey(f"{MODELS.replace('/', '.')}.picture", "PictureForConditionalGeneration"))
    eagle3 = status.algorithm("EAGLE3")
    assert (eagle3.state, eagle3.why) == ("refused", "the class does not declare `SupportsEagle3`, and declaring it "
                                          "is not enough: " + found[0].message.split(" is not enough: ", 1)[1])


def test_a_decoder_that_collects_the_aux_outputs_through_a_layer_call_is_not_judged(tmp_path):
    # The same decoder reading its aux layers: what it returns may be the pair, so nothing is said to drop
    deepstack = DEEPSTACK.replace("            hidden_states = self.norm(hidden_states)\n",
                                  "            hidden_states = self.norm(hidden_states, self.aux_layers)\n")
    text = picture(build='architectures=["DeepstackForCausalLM"]')
    registry = REGISTRY.replace('"TinyForCausalLM": ("tiny", "TinyForCausalLM"),',
                                '"TinyForCausalLM": ("tiny", "TinyForCausalLM"),\n'
                                '        "DeepstackForCausalLM": ("tiny", "DeepstackForCausalLM"),')
    analysis = analyze(vllm_tree(tmp_path, {f"{MODELS}/tiny.py": deepstack, f"{MODELS}/picture.py": text,
                                            f"{MODELS}/registry.py": registry}))
    assert [f.code for f in analysis.findings if f.class_name == "PictureForConditionalGeneration"] == ["SC006"]


DEEP_MODEL = """
    import torch.nn as nn

    from vllm.model_executor.models.interfaces import EagleModelMixin, SupportsEagle3


    class DeepModel(nn.Module{mixin}):
        pass


    class DeepForCausalLM(nn.Module{protocol}):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.model = DeepModel()
"""

DEEP_WRAPPER = """
    import torch.nn as nn

    from vllm.model_executor.models.interfaces import SupportsEagle3, SupportsMultiModal
    from vllm.model_executor.models.utils import init_vllm_registered_model


    class {name}(nn.Module, SupportsMultiModal, SupportsEagle3):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            with self._mark_language_model(vllm_config):
                self.language_model = {build}

        def forward(self, input_ids, positions):
            return self.language_model(input_ids, positions)
"""


def _with_registry(entries: dict[str, str]) -> str:
    lines = "".join(f'        "{arch}": ("{module}", "{arch}"),\n' for arch, module in entries.items())
    anchor = '"PictureForConditionalGeneration": ("picture", "PictureForConditionalGeneration"),\n'
    return REGISTRY.replace(anchor, anchor + lines)


def test_a_platform_wrapper_is_checked_against_its_own_platform_language_model(tmp_path):
    # aphrodite's DeepseekV4: the package picks the language model per platform, and only the NVIDIA branch
    # has the wrapper; the ROCm language model (no mixin, no Protocol) never runs under it
    build = 'init_vllm_registered_model(vllm_config=vllm_config, architectures=["DeepForCausalLM"])'
    files = {
        "vllm/models/__init__.py": "",
        "vllm/models/deep/__init__.py": """
            from vllm.platforms import current_platform

            if current_platform.is_rocm():
                from .amd.model import DeepForCausalLM
            else:
                from .nvidia.model import DeepForCausalLM
                from .nvidia.vl_model import DeepForConditionalGeneration
        """,
        "vllm/models/deep/amd/__init__.py": "",
        "vllm/models/deep/amd/model.py": DEEP_MODEL.format(mixin="", protocol=""),
        "vllm/models/deep/nvidia/__init__.py": "",
        "vllm/models/deep/nvidia/model.py": DEEP_MODEL.format(mixin=", EagleModelMixin", protocol=", SupportsEagle3"),
        "vllm/models/deep/nvidia/vl_model.py": DEEP_WRAPPER.format(name="DeepForConditionalGeneration", build=build),
        f"{MODELS}/registry.py": _with_registry({"DeepForCausalLM": "vllm.models.deep",
                                                 "DeepForConditionalGeneration": "vllm.models.deep"}),
    }
    analysis = analyze(vllm_tree(tmp_path, files))
    wrapper = ClassKey("vllm.models.deep.nvidia.vl_model", "DeepForConditionalGeneration")
    assert analysis.index.delegates(wrapper)["language_model"] == (ClassKey("vllm.models.deep.nvidia.model",
                                                                            "DeepForCausalLM"),)
    assert [f for f in analysis.findings if f.class_name == "DeepForConditionalGeneration"] == []


def test_each_platform_class_of_a_package_getattr_is_checked_and_named_by_its_platform(tmp_path):
    # vLLM's Qwen4Exp: the package's module __getattr__ imports the class per platform; both twins declare
    # EAGLE-3 over a decoder that is no mixin, and each finding says its platform
    wrapper = DEEP_WRAPPER.format(name="DeepForConditionalGeneration",
                                  build="DeepForCausalLM(vllm_config=vllm_config)").replace(
        "    from vllm.model_executor.models.utils import init_vllm_registered_model\n",
        "    from .model import DeepForCausalLM\n")
    files = {
        "vllm/models/__init__.py": "",
        "vllm/models/deep/__init__.py": """
            def __getattr__(name):
                from vllm.platforms import current_platform

                if current_platform.is_rocm():
                    from .amd.vl_model import DeepForConditionalGeneration
                else:
                    from .nvidia.vl_model import DeepForConditionalGeneration
                return DeepForConditionalGeneration
        """,
        f"{MODELS}/registry.py": _with_registry({"DeepForConditionalGeneration": "vllm.models.deep"}),
    }
    for platform in ("amd", "nvidia"):
        files[f"vllm/models/deep/{platform}/__init__.py"] = ""
        files[f"vllm/models/deep/{platform}/model.py"] = DEEP_MODEL.format(mixin="", protocol=", SupportsEagle3")
        files[f"vllm/models/deep/{platform}/vl_model.py"] = wrapper
    analysis = analyze(vllm_tree(tmp_path, files))
    found = sorted((f.path.split("/")[-2], f.code, f.message.rpartition(" (")[2])
                   for f in analysis.findings if f.class_name == "DeepForConditionalGeneration")
    assert found == [("amd", "SC007", "on the `amd` platform: the package's `amd` branch)"),
                     ("nvidia", "SC007", "on the `nvidia` platform: the package's `nvidia` branch)")]


def test_a_cold_run_scans_the_platform_modules_a_registered_package_imports_with_its_classes(tmp_path, monkeypatch):
    # what the registry's classes are is read from those modules (Index.platform_choices): a cold run scans
    # and parses them with the registry's modules, on all cores, rather than one by one afterwards; the
    # findings stay those of one process
    files = {
        "vllm/models/__init__.py": "",
        "vllm/models/deep/__init__.py": """
            from vllm.platforms import current_platform

            if current_platform.is_rocm():
                from .amd.model import DeepForCausalLM
            else:
                from .nvidia.model import (
                    DeepForCausalLM,
                )
            from .helpers import unrelated
        """,
        "vllm/models/deep/helpers.py": "unrelated = 1\n",
        f"{MODELS}/registry.py": _with_registry({"DeepForCausalLM": "vllm.models.deep"}),
    }
    for platform in ("amd", "nvidia"):
        files[f"vllm/models/deep/{platform}/__init__.py"] = ""
        files[f"vllm/models/deep/{platform}/model.py"] = DEEP_MODEL.format(mixin="", protocol=", SupportsEagle3")
    root = vllm_tree(tmp_path, files)
    monkeypatch.setenv("SPEC_CONTRACT_JOBS", "1")
    alone = analyze(root)
    monkeypatch.setenv("SPEC_CONTRACT_JOBS", "2")
    monkeypatch.setitem(parallel.MIN_PER_PROCESS, "files", 1)
    jobs: list = []
    real = summaries_module.scan_all
    monkeypatch.setattr(summaries_module, "scan_all", lambda made, n: jobs.extend(made) or real(made, n))
    several = analyze(root)
    scanned = {job.module: job.registered for job in jobs}
    assert scanned["vllm.models.deep.amd.model"] == scanned["vllm.models.deep.nvidia.model"] == ("DeepForCausalLM",)
    assert scanned["vllm.models.deep"] == ("DeepForCausalLM",) and "vllm.models.deep.helpers" not in scanned
    assert several.findings == alone.findings
    assert sorted((f.code, f.path.split("/")[-2]) for f in alone.findings if f.class_name == "DeepForCausalLM") == [
        ("SC007", "amd"), ("SC007", "nvidia")]


SPECULATOR = "vllm/v1/worker/gpu/spec_decode/eagle/utils.py"
# the engine's word on which models run on the V2 model runner unless the user picks one: vLLM 0.25.1's shape
# (early refusals, then a set of architectures or any dense model)
DENSE_DEFAULTS_TO_V2 = """
    DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES = frozenset(
        {
            "SomeMoeForCausalLM",
        }
    )


    class VllmConfig:
        def _is_default_v2_model_runner_model(self) -> bool:
            model_config = self.model_config
            if model_config is None:
                return False

            if model_config.runner_type != "generate":
                return False

            if getattr(model_config, "is_hybrid", False):
                return False
            architectures = getattr(model_config, "architectures", [])
            return (
                any(arch in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES for arch in architectures)
                or not model_config.is_moe
            )
"""


def _speculator_tree(root, lm_head_read: str, runner_default: str = DENSE_DEFAULTS_TO_V2):
    """The vLLM tree plus a V2 speculator that shares the target's lm_head with the draft (``lm_head_read``
    is how it reads the target's), over a Tiny language model that has an lm_head; ``runner_default``: the
    engine's ``config/vllm.py``, which says which models default to the V2 runner."""
    tiny = TINY.replace("            self.logits_processor = LogitsProcessor()\n",
                        "            self.logits_processor = LogitsProcessor()\n            self.lm_head = nn.Linear(8, 8)\n")
    files = {f"{MODELS}/tiny.py": tiny, "vllm/config/vllm.py": runner_default, SPECULATOR: f"""
        def load_eagle_model(target_model, eagle_model):
            target_language_model = (
                target_model.get_language_model() if hasattr(target_model, "get_language_model") else target_model
            )
            target_inner = target_language_model.model
            target_lm_head = {lm_head_read}
            if target_lm_head is not None:
                eagle_model.lm_head = target_lm_head
            return target_inner
    """}
    for package in ("vllm/v1/worker/gpu", "vllm/v1/worker/gpu/spec_decode", "vllm/v1/worker/gpu/spec_decode/eagle"):
        files[f"{package}/__init__.py"] = ""
    return vllm_tree(root, files)


def test_a_read_of_the_target_as_handed_is_asked_of_a_wrapper_with_a_language_model(tmp_path):
    # vLLM 0.25.1's load_eagle_model takes the embeddings from get_language_model() but the lm_head from the
    # wrapper itself: Mistral3/Pixtral-shaped wrappers have none, so the EAGLE head gets no lm_head
    root = _speculator_tree(tmp_path, 'getattr(target_model, "lm_head", None)')
    analysis = analyze(root)
    found = [(f.code, f.class_name, f.delegate, f.inner_class, [(s.path.rpartition("vllm/")[2], s.span.line + 1)
                                                                  for s in f.call_sites])
             for f in analysis.findings if f.member == "lm_head"]
    line = line_of(root, SPECULATOR, 'getattr(target_model, "lm_head"')
    assert found == [("SC002", "PictureForConditionalGeneration", "language_model", "TinyForCausalLM",
                      [("v1/worker/gpu/spec_decode/eagle/utils.py", line)])]


def test_a_read_of_the_target_as_handed_that_only_backs_up_the_language_model_is_not(tmp_path):
    # vLLM 0.30.0's fix: the language model's lm_head first, the wrapper's only when it has none
    read = 'getattr(target_language_model, "lm_head", None) or getattr(target_model, "lm_head", None)'
    analysis = analyze(_speculator_tree(tmp_path, read))
    assert [f for f in analysis.findings if f.member == "lm_head"] == []


# vLLM 0.25.1's EagleLlamaForCausalLM/EagleMistralForCausalLM: nn.Module.__init__(self) instead of the base's
# __init__, which assigns lm_head, so the head comes only from the target the loader shares it from
HEADLESS_DRAFT = """
    import torch.nn as nn

    from .tiny import TinyForCausalLM, TinyModel


    class EagleTinyForCausalLM(TinyForCausalLM):
        def __init__(self, *, vllm_config, prefix=""):
            nn.Module.__init__(self)
            self.model = TinyModel()
"""

_AS_HANDED = 'getattr(target_model, "lm_head", None)'


def _lm_head_findings(analysis):
    return [(f.code, f.class_name, f.delegate, f.inner_class) for f in analysis.findings if f.member == "lm_head"]


def test_a_shared_read_of_the_target_as_handed_crashes_with_a_draft_that_builds_no_head(tmp_path):
    # upstream issue 48700: the guarded read finds no lm_head on the wrapper, the draft keeps the none it has,
    # and its inherited compute_logits reads self.lm_head in the start-up dummy run
    root = _speculator_tree(tmp_path, _AS_HANDED)
    (root / MODELS / "tiny_eagle.py").write_text(textwrap.dedent(HEADLESS_DRAFT))
    analysis = analyze(root)
    assert _lm_head_findings(analysis) == [("SC001", "PictureForConditionalGeneration", "language_model",
                                            "TinyForCausalLM")]
    finding = next(f for f in analysis.findings if f.member == "lm_head")
    assert finding.severity == "error" and "`EagleTinyForCausalLM` build none" in finding.message


def test_a_shared_read_stays_optional_when_every_draft_builds_its_own_head(tmp_path):
    root = _speculator_tree(tmp_path, _AS_HANDED)
    (root / MODELS / "tiny_eagle.py").write_text(textwrap.dedent(HEADLESS_DRAFT).replace(
        "nn.Module.__init__(self)", "super().__init__(vllm_config=vllm_config, prefix=prefix)"))
    assert _lm_head_findings(analyze(root)) == [("SC002", "PictureForConditionalGeneration", "language_model",
                                                 "TinyForCausalLM")]


def test_a_wrapper_whose_language_model_the_config_names_crashes_there_too(tmp_path):
    # vLLM 0.25.1's Mistral3 and Pixtral: init_vllm_registered_model(hf_config=config.text_config), a class not
    # known here, but the wrapper as handed lacks lm_head whatever it is
    root = _speculator_tree(tmp_path, _AS_HANDED)
    (root / MODELS / "tiny_eagle.py").write_text(textwrap.dedent(HEADLESS_DRAFT))
    (root / MODELS / "picture.py").write_text(picture(build="hf_config=vllm_config.hf_config.text_config"))
    analysis = analyze(root)
    assert _lm_head_findings(analysis) == [("SC001", "PictureForConditionalGeneration", "language_model", "")]


# vLLM 0.25.1's engine picks the V1 model runner, whose proposer takes the lm_head from get_language_model(),
# for a checkpoint with experts and for a registered class that declares IsHybrid (Qwen3.5, LFM2-VL,
# Nemotron-H VL): the V2 read of the wrapper as handed crashes only when VLLM_USE_V2_MODEL_RUNNER=1 asks for it
@pytest.mark.parametrize(("mixin", "body", "why"), [
    ("MixtureOfExperts", "pass", "none of its architectures is in `DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES` and its "
                                 "checkpoints have experts"),
    ("IsHybrid", "is_hybrid = True", "it declares `IsHybrid`"),
])
def test_a_wrapper_crashes_there_only_on_the_v2_runner_it_does_not_default_to(tmp_path, mixin, body, why):
    root = _speculator_tree(tmp_path, _AS_HANDED)
    (root / MODELS / "tiny_eagle.py").write_text(textwrap.dedent(HEADLESS_DRAFT))
    text = picture(bases=f"nn.Module, SupportsMultiModal, {mixin}").replace(
        "class PictureVisionTower", f"class {mixin}:\n    {body}\n\n\nclass PictureVisionTower")
    (root / MODELS / "picture.py").write_text(text)
    analysis = analyze(root)
    assert _lm_head_findings(analysis) == [("SC004", "PictureForConditionalGeneration", "language_model",
                                            "TinyForCausalLM")]
    assert next(f.condition for f in analysis.findings if f.member == "lm_head") == \
        f"the V2 model runner, which it gets only with VLLM_USE_V2_MODEL_RUNNER=1 ({why})"


# vLLM 0.24.0's engine gives the V2 runner only to a list of text architectures: a multimodal wrapper runs on V1
# (whose proposer takes the head from get_language_model()) unless the user asks for V2
LISTED_DEFAULT_TO_V2 = """
    DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES = frozenset({"TinyForCausalLM"})


    class VllmConfig:
        def _is_default_v2_model_runner_model(self) -> bool:
            model_config = self.model_config
            if model_config is None:
                return False
            if model_config.runner_type != "generate":
                return False
            architectures = getattr(model_config, "architectures", [])
            return any(arch in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES for arch in architectures)
"""


@pytest.mark.parametrize(("runner_default", "code", "words"), [
    (LISTED_DEFAULT_TO_V2, "SC004", "only on the V2 model runner, which it gets only with VLLM_USE_V2_MODEL_RUNNER=1 "
                                    "(none of its architectures is in `DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES`)"),
    (LISTED_DEFAULT_TO_V2.replace('"TinyForCausalLM"', '"PictureForConditionalGeneration"'), "SC001",
     "on the V2 model runner, its default (one of its architectures is in `DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES`)"),
    ("", "SC004", "(which model runner its runs default to cannot be told here)"),
], ids=["not-listed", "listed", "no-such-function"])
def test_which_runner_a_wrapper_defaults_to_is_read_from_the_engine_s_function(tmp_path, runner_default, code,
                                                                                words):
    root = _speculator_tree(tmp_path, _AS_HANDED, runner_default)
    (root / MODELS / "tiny_eagle.py").write_text(textwrap.dedent(HEADLESS_DRAFT))
    analysis = analyze(root)
    assert _lm_head_findings(analysis) == [(code, "PictureForConditionalGeneration", "language_model",
                                            "TinyForCausalLM")]
    assert words in next(f.message for f in analysis.findings if f.member == "lm_head")


def _tiny_with(root, member: str) -> None:
    """The speculator tree's language model with ``member`` (a body line) added to its class."""
    (root / MODELS / "tiny_eagle.py").write_text(textwrap.dedent(HEADLESS_DRAFT))
    tiny = (root / MODELS / "tiny.py").read_text()
    changed = tiny.replace("\n\nclass TinyEmbeddingModel", f"\n    {member}\n\n\nclass TinyEmbeddingModel")
    assert changed != tiny
    (root / MODELS / "tiny.py").write_text(changed)


def test_a_language_model_that_maps_expert_weights_has_experts_too(tmp_path):
    # vLLM 0.25.1's MiniMax M3 (ROCm): its language model declares no MixtureOfExperts and is not named for
    # experts, but maps expert weights for the loader, so its checkpoints run on the V1 model runner by default
    root = _speculator_tree(tmp_path, _AS_HANDED)
    _tiny_with(root, "def get_expert_mapping(self):\n        return []")
    assert _lm_head_findings(analyze(root)) == [("SC004", "PictureForConditionalGeneration", "language_model",
                                                 "TinyForCausalLM")]


def test_an_attribute_named_like_the_expert_mapping_is_no_sign_of_experts(tmp_path):
    root = _speculator_tree(tmp_path, _AS_HANDED)
    _tiny_with(root, "get_expert_mapping = None")
    assert _lm_head_findings(analyze(root)) == [("SC001", "PictureForConditionalGeneration", "language_model",
                                                 "TinyForCausalLM")]


def test_the_matrix_and_hover_say_the_shared_read_s_crash_for_the_runs_that_load_such_a_draft(tmp_path):
    # the draft that builds no head is EAGLE's (named for it): an EAGLE run of the wrapper crashes, and the
    # matrix cell and hover say so as check does; the other algorithms' runs load other drafts
    from spec_contract.engine import support_matrix
    from spec_contract.lsp.hover import class_markdown

    root = _speculator_tree(tmp_path, _AS_HANDED)
    (root / MODELS / "tiny_eagle.py").write_text(textwrap.dedent(HEADLESS_DRAFT))
    analysis = analyze(root)
    finding = next(f for f in analysis.findings if f.member == "lm_head")
    assert (finding.code, finding.algorithm) == ("SC001", "EAGLE")
    matrix = support_matrix(analysis)
    row = next(r for r in matrix.rows if r.class_name == "PictureForConditionalGeneration")
    states = {algorithm: str(cell.state) for algorithm, cell in zip(matrix.algorithms, row.cells)}
    assert states["EAGLE"] == "crashes"
    assert all(state != "crashes" for algorithm, state in states.items() if algorithm != "EAGLE")
    key = ClassKey(finding.class_qualname.rpartition(".")[0], "PictureForConditionalGeneration")
    status = analysis.status_of(key)
    text = class_markdown(status, lambda path, line: f"{path}:{line + 1}", [finding])
    assert "- EAGLE: crashes\n  - `lm_head` at " in text
