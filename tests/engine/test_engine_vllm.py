"""The vLLM profile: registry-registered classes, registry-built inner models, and capabilities declared with a
runtime-checkable Protocol (declared but not backed, not declared, unverifiable).

The tree is vLLM-shaped and small, written for these tests: an ``interfaces.py`` with a Protocol whose
default methods delegate to the language model's ``.model`` and assert a mixin, a ``registry.py`` of
``"Arch": ("module", "Class")`` dicts, a model runner that gates EAGLE-3 with ``supports_eagle3(...)``, a
proposer, and one model file per shape. The root holds ``vllm/``, so the profile is chosen by itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest
from engine_trees import STATUS_CODES, analyze, line_of, make_tree, rel
from spec_contract.engine.config import ConfigError, load_config
from spec_contract.engine.edits.declare import declare_protocol
from spec_contract.engine.edits.fix import declaration_edits, delegation_edits
from spec_contract.engine.edits.refusals import Fixes
from spec_contract.engine.launch.matrix import support_matrix
from spec_contract.engine.resolve.index import ClassKey
from spec_contract.engine.results import Role
from spec_contract.engine.text import apply_edits
from spec_contract.report.text import clauses

MODELS = "vllm/model_executor/models"

INTERFACES = """
    from typing import ClassVar, Literal, Protocol, runtime_checkable


    class EagleModelMixin:
        aux_layers: tuple = ()

        def _set_aux_layers(self, layers):
            self.aux_layers = layers


    class SupportsMultiModal(Protocol):
        supports_multimodal: ClassVar[Literal[True]] = True
        _language_model_names: list = []

        def get_language_model(self):
            for name in self._language_model_names:
                return getattr(self, name)
            raise NotImplementedError(f"no language model marked in {type(self).__name__}")


    @runtime_checkable
    class SupportsEagle3(Protocol):
        supports_eagle3: ClassVar[Literal[True]] = True

        def set_aux_hidden_state_layers(self, layers):
            owner = self.get_language_model() if hasattr(self, "get_language_model") else self
            holder = getattr(owner, "model", owner)
            assert isinstance(holder, EagleModelMixin)
            holder._set_aux_layers(layers)

        def get_eagle3_default_aux_hidden_state_layers(self):
            return (2,)


    def supports_eagle3(model):
        return isinstance(model, SupportsEagle3)
"""

REGISTRY = """
    _TEXT_GENERATION_MODELS = {
        "TinyForCausalLM": ("tiny", "TinyForCausalLM"),
        "PlainForCausalLM": ("plain", "PlainForCausalLM"),
    }
    _MULTIMODAL_MODELS = {
        "PictureForConditionalGeneration": ("picture", "PictureForConditionalGeneration"),
    }
    _SPECULATIVE_DECODING_MODELS = {
        "EagleTinyForCausalLM": ("tiny_eagle", "EagleTinyForCausalLM"),
    }
    _EMBEDDING_MODELS = {
        "TinyEmbeddingModel": ("tiny", "TinyEmbeddingModel"),
    }
    _ALL_MODELS = {**_TEXT_GENERATION_MODELS, **_MULTIMODAL_MODELS}
"""

RUNNER = """
    from vllm.model_executor.models.interfaces import supports_eagle3


    class GPUModelRunner:
        def load_model(self):
            if self.use_aux_hidden_state_outputs:
                self.setup_aux()

        def setup_aux(self):
            if not supports_eagle3(self.get_model()):
                raise RuntimeError("the model does not support EAGLE3")
            layers = self.model.get_eagle3_default_aux_hidden_state_layers()
            self.model.set_aux_hidden_state_layers(layers)


    def resolve_aux(runner, speculative_config):
        if speculative_config.method == "eagle3":
            runner.use_aux_hidden_state_outputs = True
"""

# The release's methods, as vLLM's speculative config names them (read as the algorithms), and a predicate
SPECULATIVE = """
    from typing import Literal

    SpeculativeMethod = Literal["eagle", "eagle3", "mtp", "ngram"]


    class SpeculativeConfig:
        def use_eagle(self):
            return self.method in ("eagle", "eagle3", "mtp")
"""

PROPOSER = """
    class EagleProposer:
        def greedy(self, hidden):
            return self.model.get_top_tokens(hidden)

        def load_model(self, target_model):
            if hasattr(target_model, "get_language_model"):
                language_model = target_model.get_language_model()
            else:
                language_model = target_model
            self.embed = language_model.model.embed_tokens
"""

TINY = """
    import torch.nn as nn

    from .interfaces import EagleModelMixin, SupportsEagle3


    class LogitsProcessor(nn.Module):
        def get_top_tokens(self, hidden):
            return hidden


    class TinyDecoderLayer(nn.Module):
        def get_top_tokens(self, hidden):
            return hidden


    class TinyModel(nn.Module, EagleModelMixin):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(8, 4)
            self.layers = [TinyDecoderLayer()]


    class TinyForCausalLM(nn.Module, SupportsEagle3):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.model = TinyModel()
            self.logits_processor = LogitsProcessor()


    class TinyEmbeddingModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = TinyModel()
"""

PLAIN = """
    import torch.nn as nn

    from .interfaces import SupportsEagle3


    class PlainModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(8, 4)


    class PlainForCausalLM(nn.Module, SupportsEagle3):
        model_cls = PlainModel

        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.model = self.model_cls()
"""


def picture(bases: str = "nn.Module, SupportsMultiModal", build: str = 'architectures=["TinyForCausalLM"]',
            annotation: str = "") -> str:
    """A multimodal wrapper whose language model the registry builds (``init_vllm_registered_model``)."""
    return f"""
import torch.nn as nn

from .interfaces import SupportsEagle3, SupportsMultiModal
from .utils import init_vllm_registered_model


class PictureVisionTower(nn.Module):
    def get_top_tokens(self, hidden):
        return hidden


class PictureForConditionalGeneration({bases}):
    def __init__(self, *, vllm_config, prefix=""):
        super().__init__()
        self.vision_tower = PictureVisionTower()
        with self._mark_language_model(vllm_config):
            self.language_model{annotation} = init_vllm_registered_model(vllm_config=vllm_config, {build})

    def forward(self, input_ids, positions):
        return self.language_model(input_ids, positions)
"""


def vllm_tree(root: Path, files: dict[str, str] | None = None) -> Path:
    return make_tree(root, {
        "vllm/__init__.py": "",
        "vllm/model_executor/__init__.py": "",
        f"{MODELS}/__init__.py": "",
        f"{MODELS}/interfaces.py": INTERFACES,
        f"{MODELS}/registry.py": REGISTRY,
        f"{MODELS}/utils.py": "def init_vllm_registered_model(vllm_config, *, prefix='', architectures=None, hf_config=None):\n"
                              "    return None\n",
        f"{MODELS}/tiny.py": TINY,
        f"{MODELS}/plain.py": PLAIN,
        f"{MODELS}/picture.py": picture(),
        "vllm/v1/__init__.py": "",
        "vllm/v1/worker/__init__.py": "",
        "vllm/v1/worker/gpu_model_runner.py": RUNNER,
        "vllm/v1/spec_decode/__init__.py": "",
        "vllm/v1/spec_decode/eagle.py": PROPOSER,
        "vllm/config/__init__.py": "",
        "vllm/config/speculative.py": SPECULATIVE,
        **(files or {}),
    })


def codes(analysis) -> list[tuple[str, str, str, str]]:
    """(code, class, member, severity) of every finding."""
    return sorted((f.code, f.class_name, f.member, f.severity) for f in analysis.findings)


def test_a_tree_holding_vllm_gets_the_vllm_profile(tmp_path):
    root = vllm_tree(tmp_path)
    assert load_config(root).profile == "vllm"
    assert load_config(root / "vllm").profile == "vllm"  # an installed package: the folder is `vllm` itself
    assert load_config(root, overrides={"profile": "sglang"}).profile == "sglang"  # an explicit choice wins


def test_a_proposer_moved_into_a_package_of_its_own_is_still_a_worker(tmp_path):
    """The V1 proposers may move into per-algorithm packages (``v1/spec_decode/eagle/proposer.py``), as the V2
    speculators did: their uses are found there as in a module of ``v1/spec_decode`` itself."""
    def uses(analysis) -> list[tuple[str, str, str]]:
        return sorted((str(e.role), e.member, rel(tmp_path, s.path).split("/spec_decode/")[-1])
                      for e in analysis.contract.entries for s in e.call_sites if "/spec_decode/" in s.path)

    flat = uses(analyze(vllm_tree(tmp_path / "flat")))
    moved = uses(analyze(vllm_tree(tmp_path / "moved", {
        "vllm/v1/spec_decode/eagle.py": "", "vllm/v1/spec_decode/eagle_v1/__init__.py": "",
        "vllm/v1/spec_decode/eagle_v1/proposer.py": PROPOSER})))
    assert ("draft", "get_top_tokens", "eagle.py") in flat
    assert moved == [(role, member, "eagle_v1/proposer.py") for role, member, _ in flat]


def test_a_model_runner_moved_or_renamed_is_still_a_worker(tmp_path):
    """``gpu_model_runner.py`` moved into a package or named for another platform: its capability check (the
    EAGLE-3 ``supports_eagle3`` gate) is the runner's, as before."""
    flat = codes(analyze(vllm_tree(tmp_path / "flat")))
    moved = codes(analyze(vllm_tree(tmp_path / "moved", {
        "vllm/v1/worker/gpu_model_runner.py": "", "vllm/v1/worker/runners/__init__.py": "",
        "vllm/v1/worker/runners/xpu_model_runner.py": RUNNER})))
    assert [code for code, *_ in flat] == ["SC006", "SC007"]
    assert moved == flat


def test_only_classes_of_the_registrys_generation_tables_are_checked(tmp_path):
    analysis = analyze(vllm_tree(tmp_path))
    checked = sorted(key.qualname for key in analysis.checked)
    # layers, towers and the logits processor are helpers; the embedding table is not a generation table
    assert checked == ["PictureForConditionalGeneration", "PlainForCausalLM", "TinyForCausalLM"]


def test_a_package_that_picks_its_class_per_platform_offers_each_choice(tmp_path):
    fancy = "import torch.nn as nn\n\n\nclass FancyForCausalLM(nn.Module):\n    pass\n"
    files = {
        "vllm/models/__init__.py": "",
        "vllm/models/fancy/__init__.py": """
            from vllm.platforms import current_platform

            if current_platform.is_rocm():
                from .amd import FancyForCausalLM
            else:
                from .cuda import FancyForCausalLM
        """,
        "vllm/models/fancy/amd.py": fancy,
        "vllm/models/fancy/cuda.py": fancy,
        f"{MODELS}/registry.py": REGISTRY + '    _TRANSFORMERS_BACKEND_MODELS = {"FancyForCausalLM": '
                                            '("vllm.models.fancy", "FancyForCausalLM")}\n',
        f"{MODELS}/picture.py": picture(build='architectures=["FancyForCausalLM"]'),
    }
    root = vllm_tree(tmp_path, files)
    choices = (ClassKey("vllm.models.fancy.amd", "FancyForCausalLM"), ClassKey("vllm.models.fancy.cuda", "FancyForCausalLM"))
    # a checkout holding vllm/, or the installed package folder itself (vllm/models/ is then models/ at the top)
    for checked in (root, root / "vllm"):
        analysis = analyze(checked)
        assert set(choices) <= set(analysis.checked)
        assert {key.module for key in analysis.checked} <= {source.module for source in analysis.models}
        picture_key = ClassKey("vllm.model_executor.models.picture", "PictureForConditionalGeneration")
        assert analysis.index.delegates(picture_key)["language_model"] == choices


def test_registry_built_inner_models_resolve_through_the_architecture_name(tmp_path):
    analysis = analyze(vllm_tree(tmp_path))
    picture_key = ClassKey("vllm.model_executor.models.picture", "PictureForConditionalGeneration")
    assert analysis.index.delegates(picture_key) == {
        "vision_tower": (ClassKey("vllm.model_executor.models.picture", "PictureVisionTower"),),
        "language_model": (ClassKey("vllm.model_executor.models.tiny", "TinyForCausalLM"),),
    }


def test_a_model_cls_class_attribute_builds_the_inner_model(tmp_path):
    analysis = analyze(vllm_tree(tmp_path))
    plain = ClassKey("vllm.model_executor.models.plain", "PlainForCausalLM")
    assert analysis.index.delegates(plain) == {"model": (ClassKey("vllm.model_executor.models.plain", "PlainModel"),)}


def test_helpers_are_never_inner_models_to_forward_to(tmp_path):
    # The draft calls get_top_tokens; the wrapper's vision tower and Tiny's logits processor have it, but
    # the profile restricts delegates to its names: no forward is asked of anyone for it.
    analysis = analyze(vllm_tree(tmp_path))
    assert [f for f in analysis.findings if f.member == "get_top_tokens"] == []


def test_target_reads_are_not_asked_of_a_class_whose_language_model_the_worker_takes(tmp_path):
    # The proposer reads `.model` of the target's language model: Picture has get_language_model (through
    # SupportsMultiModal), so the read is its language model's; without it, the read is Picture's own.
    analysis = analyze(vllm_tree(tmp_path))
    assert [f for f in analysis.findings if f.member == "model"] == []
    files = {f"{MODELS}/picture.py": picture(bases="nn.Module")}
    analysis = analyze(vllm_tree(tmp_path, files))
    assert [(f.code, f.class_name, f.member, f.delegate) for f in analysis.findings if f.member == "model"] == [
        ("SC001", "PictureForConditionalGeneration", "model", "language_model")]


def test_a_capability_finding_says_what_fails_in_a_first_clause_a_terminal_line_holds(tmp_path):
    # issue 37 item 3: text output prints the first clause on the finding's line and each further one on a
    # `  = ` line; the capability messages were one sentence of 240 characters
    analysis = analyze(vllm_tree(tmp_path))
    heads = {f.code: clauses(f.message)[0] for f in analysis.findings}
    assert set(heads) == {"SC006", "SC007"}
    assert all(len(head) <= 160 for head in heads.values()), heads


def test_capability_findings_declared_not_backed_and_not_declared(tmp_path):
    analysis = analyze(vllm_tree(tmp_path))
    assert codes(analysis) == [
        ("SC006", "PictureForConditionalGeneration", "SupportsEagle3", "warning"),
        ("SC007", "PlainForCausalLM", "SupportsEagle3", "error"),
    ]
    by_code = {f.code: f for f in analysis.findings}
    assert by_code["SC007"].message == (
        "`PlainForCausalLM` declares `SupportsEagle3`, but `self.model` (`PlainModel`) is not an `EagleModelMixin`; "
        "its default `set_aux_hidden_state_layers` reaches it; a EAGLE3 run passes the check at "
        "vllm/v1/worker/gpu_model_runner.py:10 and then fails the default's assertion at start-up")
    assert by_code["SC006"].message.startswith(
        "`PictureForConditionalGeneration` does not declare `SupportsEagle3` while "
        "`self.language_model` (TinyForCausalLM) declares and backs it; a EAGLE3 run is refused only after loading the weights")
    assert by_code["SC006"].delegate == "language_model.model" and by_code["SC006"].algorithm == "EAGLE3"
    assert [(s.span.line + 1, s.text) for s in by_code["SC006"].call_sites] == [
        (10, "if not supports_eagle3(self.get_model()):")]


def test_a_declaring_wrapper_whose_language_model_backs_it_is_clean(tmp_path):
    files = {f"{MODELS}/picture.py": picture(bases="nn.Module, SupportsMultiModal, SupportsEagle3")}
    analysis = analyze(vllm_tree(tmp_path, files))
    assert [c for c in codes(analysis) if c[1] == "PictureForConditionalGeneration"] == []


def test_an_override_of_the_asserting_default_is_trusted(tmp_path):
    plain = PLAIN + """
        def set_aux_hidden_state_layers(self, layers):
            self.model.aux_layers = layers
    """
    analysis = analyze(vllm_tree(tmp_path, {f"{MODELS}/plain.py": plain}))
    assert [c for c in codes(analysis) if c[1] == "PlainForCausalLM"] == []


def test_the_attribute_marked_as_the_language_model_is_the_one_the_defaults_reach(tmp_path):
    # `self.text` is no delegate name, but _mark_language_model says it holds the language model
    files = {f"{MODELS}/picture.py": picture().replace("self.language_model = ", "self.text = ")}
    analysis = analyze(vllm_tree(tmp_path, files))
    assert [(f.code, f.class_name, f.delegate) for f in analysis.findings if f.class_name.startswith("Picture")] == [
        ("SC006", "PictureForConditionalGeneration", "text.model")]


# Own backs its declaration with its own override; a wrapper's defaults would still reach Own.model (PlainModel,
# no mixin), so declaring the Protocol alone would crash (vLLM's Kimi-VL over DeepseekV2ForCausalLM)
OWN_BEHIND_A_PICTURE = {
    f"{MODELS}/plain.py": PLAIN + """

    class OwnForCausalLM(nn.Module, SupportsEagle3):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.model = PlainModel()

        def set_aux_hidden_state_layers(self, layers):
            self.model.aux_layers = layers
    """,
    f"{MODELS}/registry.py": REGISTRY + '    _OTHER_MODELS = {"OwnForCausalLM": ("plain", "OwnForCausalLM")}\n',
    f"{MODELS}/picture.py": picture(build='architectures=["OwnForCausalLM"]')}


def test_no_base_is_suggested_when_the_defaults_would_not_reach_a_mixin(tmp_path):
    # SC009 says declaring is not enough, and no declaration is offered
    analysis = analyze(vllm_tree(tmp_path, OWN_BEHIND_A_PICTURE))
    found = [f for f in analysis.findings if f.class_name == "PictureForConditionalGeneration"]
    assert [(f.code, f.severity, f.inner_class) for f in found] == [("SC009", "warning", "PlainModel")]
    assert "declaring it is not enough: once declared, `self.language_model.model` (`PlainModel`) is not an " \
           "`EagleModelMixin`; its default `set_aux_hidden_state_layers` reaches it" in found[0].message
    assert "its `set_aux_hidden_state_layers`, which the class's defaults never call" in found[0].message
    assert declaration_edits(analysis, found).edits == ()


def test_a_language_model_named_by_the_hf_config_is_unverifiable(tmp_path):
    files = {f"{MODELS}/picture.py": picture(bases="nn.Module, SupportsMultiModal, SupportsEagle3",
                                               build="hf_config=vllm_config.hf_config.text_config")}
    analysis = analyze(vllm_tree(tmp_path, files))
    found = [f for f in analysis.findings if f.class_name == "PictureForConditionalGeneration"]
    assert [(f.code, f.severity) for f in found] == [("SC008", "information")]
    assert "is built from an architecture the HF config names at run time" in found[0].message


def test_an_annotated_assignment_names_the_inner_model(tmp_path):
    # The registry call names no architecture, the annotation does: the defaults reach Plain's model
    files = {f"{MODELS}/picture.py": picture(bases="nn.Module, SupportsMultiModal, SupportsEagle3",
                                               build="hf_config=vllm_config.hf_config.text_config",
                                               annotation=": PlainForCausalLM").replace(
        "from .utils import", "from .plain import PlainForCausalLM\nfrom .utils import")}
    analysis = analyze(vllm_tree(tmp_path, files))
    assert [c for c in codes(analysis) if c[1] == "PictureForConditionalGeneration"] == [
        ("SC007", "PictureForConditionalGeneration", "SupportsEagle3", "error")]


def test_a_structural_declaration_counts_as_declaring(tmp_path):
    files = {f"{MODELS}/picture.py": picture().replace(
        "    def forward(", "    supports_eagle3 = True\n\n    def forward(")}
    analysis = analyze(vllm_tree(tmp_path, files))
    # it declares by its marker; the defaults are not in its MRO, so nothing runs them: nothing to report
    assert [c for c in codes(analysis) if c[1] == "PictureForConditionalGeneration"] == []


def test_type_checking_bases_resolve_to_the_runtime_branch(tmp_path):
    head = """
        from typing import TYPE_CHECKING

        import torch.nn as nn

        from .tiny import TinyForCausalLM

        if TYPE_CHECKING:
            class _HeadBase(nn.Module):
                def get_top_tokens(self, hidden): ...
        else:
            _HeadBase = TinyForCausalLM


        class EagleTinyForCausalLM(_HeadBase):
            pass
    """
    analysis = analyze(vllm_tree(tmp_path, {f"{MODELS}/tiny_eagle.py": head}))
    key = ClassKey("vllm.model_executor.models.tiny_eagle", "EagleTinyForCausalLM")
    assert analysis.index.mro(key)[1] == ClassKey("vllm.model_executor.models.tiny", "TinyForCausalLM")


def test_the_gated_protocols_members_are_not_forwards(tmp_path):
    # Forwarding set_aux_hidden_state_layers would not pass supports_eagle3(): no missing-forward finding
    # names a member of the Protocol, and --fix forwards nothing for a capability finding.
    analysis = analyze(vllm_tree(tmp_path))
    assert {f.member for f in analysis.findings} == {"SupportsEagle3"}
    assert delegation_edits(analysis, analysis.findings) == Fixes()


@pytest.mark.parametrize("source, expected", [
    ("from .interfaces import SupportsMultiModal\n\n\nclass P(nn.Module, SupportsMultiModal):\n    pass\n",
     "from .interfaces import SupportsMultiModal, SupportsEagle3\n\n\n"
     "class P(nn.Module, SupportsMultiModal, SupportsEagle3):\n    pass\n"),
    ("from .interfaces import (\n    SupportsMultiModal,\n)\n\n\nclass P(\n    nn.Module,\n    SupportsMultiModal,\n):\n"
     "    pass\n",
     "from .interfaces import (\n    SupportsMultiModal,\n    SupportsEagle3,\n)\n\n\n"
     "class P(\n    nn.Module,\n    SupportsMultiModal,\n    SupportsEagle3,\n):\n    pass\n"),
    ("import torch.nn as nn\n\n\nclass P(nn.Module):\n    pass\n",
     "import torch.nn as nn\nfrom vllm.model_executor.models.interfaces import SupportsEagle3\n\n\n"
     "class P(nn.Module, SupportsEagle3):\n    pass\n"),
])
def test_declaring_the_protocol_adds_the_base_and_its_import(source, expected):
    module = "vllm.model_executor.models.interfaces"
    assert declare_protocol(source, "P", module, "SupportsEagle3") == expected
    assert declare_protocol(expected, "P", module, "SupportsEagle3") == expected  # twice adds nothing


def test_a_receiver_table_outside_the_tools_table_is_an_error_naming_it(tmp_path):
    config = tmp_path / "spec.toml"
    config.write_text('[tool.spec-contract]\nprofile = "vllm"\n\n[[receivers]]\npattern = "*.target"\nrole = "target"\n')
    with pytest.raises(ConfigError, match=r"'receivers' is outside \[tool.spec-contract\] and would be ignored; "
                                          r"write it as \[\[tool.spec-contract.receivers\]\]"):
        load_config(None, config)


def test_an_out_of_tree_package_checks_its_own_classes_against_the_installed_engines_registry(tmp_path):
    venv.create(tmp_path / "venv", with_pip=False)
    python = tmp_path / "venv" / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    vllm_tree(Path(site))
    (Path(site) / "vllm" / "__init__.py").write_text("raise RuntimeError('the engine must never be imported')\n")
    plugin = make_tree(tmp_path / "plugin", {
        "my_models/__init__.py": "",
        "my_models/pictures.py": picture().replace("from .interfaces", "from vllm.model_executor.models.interfaces")
                                          .replace("from .utils", "from vllm.model_executor.models.utils")
                                          .replace("PictureFor", "MyPictureFor"),
    })
    done = subprocess.run([sys.executable, "-m", "spec_contract", "check", str(plugin / "my_models"), "--no-cache",
                           "--profile", "vllm", "--python", str(python), "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    found = [(f["code"], f["class"], f["delegate"], f["inner_class"]) for f in json.loads(done.stdout)["findings"]
             if f["code"] not in STATUS_CODES]
    assert found == [("SC006", "MyPictureForConditionalGeneration", "language_model.model", "TinyForCausalLM")]


def test_a_registry_without_the_profiles_tables_is_a_configuration_error(tmp_path):
    root = vllm_tree(tmp_path, {f"{MODELS}/registry.py": "_MODELS = {'TinyForCausalLM': ('tiny', 'TinyForCausalLM')}\n"})
    with pytest.raises(ConfigError, match=r"hold none of the tables _TEXT_GENERATION_MODELS, .* set 'registry-tables'"):
        analyze(root)


def test_the_not_declared_fix_adds_the_protocol_as_one_small_edit_and_the_class_then_checks_clean(tmp_path):
    root = vllm_tree(tmp_path)
    analysis = analyze(root)
    sc006 = [f for f in analysis.findings if f.code == "SC006"]
    assert delegation_edits(analysis, sc006) == Fixes()  # forwarding methods would not pass the check
    (edit,) = declaration_edits(analysis, sc006).edits
    path = Path(sc006[0].path)
    before = path.read_text()
    assert len(edit.new_text) < len(before) // 2  # the changed lines, not a rewrite of the file
    path.write_text(apply_edits(before, [edit]))
    assert "SupportsEagle3" in path.read_text().split("class PictureForConditionalGeneration", 1)[1].split(":")[0]
    assert [c for c in codes(analyze(root)) if c[1] == "PictureForConditionalGeneration"] == []


# Declared but not backed, past the mixin: the aux outputs must reach the model runner, and the proposers must
# find the language model's decoder.

TINY_FORWARD = TINY.replace('''            self.logits_processor = LogitsProcessor()
''', '''            self.logits_processor = LogitsProcessor()

        def forward(self, input_ids, positions):
            hidden_states = self.model(input_ids, positions)
            return hidden_states
''').replace('''            self.layers = [TinyDecoderLayer()]
''', '''            self.layers = [TinyDecoderLayer()]

        def forward(self, input_ids, positions):
            hidden_states, aux_hidden_states = self.embed(input_ids), []
            for index, layer in enumerate(self.layers):
                if index in self.aux_layers:
                    aux_hidden_states.append(hidden_states)
                hidden_states = layer(hidden_states, positions)
            if aux_hidden_states:
                return hidden_states, aux_hidden_states
            return hidden_states
''')


def declaring_picture(forward: str) -> str:
    """A multimodal wrapper that declares EAGLE-3 over Tiny, with ``forward``'s body."""
    return picture(bases="nn.Module, SupportsMultiModal, SupportsEagle3").replace(
        "        return self.language_model(input_ids, positions)\n", textwrap.indent(textwrap.dedent(forward), " " * 8))


def test_a_wrapper_forward_that_keeps_only_the_hidden_states_is_not_backed(tmp_path):
    forward = """
        hidden_states = self.language_model.model(input_ids, positions)
        return self.post_norm(hidden_states)
    """
    files = {f"{MODELS}/tiny.py": TINY_FORWARD, f"{MODELS}/picture.py": declaring_picture(forward)}
    root = vllm_tree(tmp_path, files)
    analysis = analyze(root)
    (found,) = [f for f in analysis.findings if f.class_name == "PictureForConditionalGeneration"]
    line = line_of(root, f"{MODELS}/picture.py", "return self.post_norm")
    assert (found.code, found.severity, found.inner_class) == ("SC007", "error", "PictureForConditionalGeneration")
    assert found.message == (
        "`PictureForConditionalGeneration` declares `SupportsEagle3`, but `PictureForConditionalGeneration.forward` "
        f"drops the aux hidden states; `return self.post_norm(hidden_states)` ({MODELS}/picture.py:{line}) is not "
        "the `(hidden, aux)` pair `self.language_model.model(...)` returns; a EAGLE3 run passes the check at "
        "vllm/v1/worker/gpu_model_runner.py:10 and then fails at the first forward, where the model runner unpacks "
        "`hidden_states, aux_hidden_states` from the model's output")


def test_a_language_model_forward_between_that_drops_them_is_not_backed(tmp_path):
    # The wrapper hands on what its language model returns; the language model's own forward scales it
    tiny = TINY_FORWARD.replace("            return hidden_states\n\n\n    class TinyEmbeddingModel",
                                "            return hidden_states * self.scale\n\n\n    class TinyEmbeddingModel")
    forward = """
        outputs = self.language_model(input_ids, positions)
        return outputs
    """
    files = {f"{MODELS}/tiny.py": tiny, f"{MODELS}/picture.py": declaring_picture(forward)}
    analysis = analyze(vllm_tree(tmp_path, files))
    assert sorted((f.code, f.class_name, f.inner_class) for f in analysis.findings if f.class_name != "PlainForCausalLM") == [
        ("SC007", "PictureForConditionalGeneration", "TinyForCausalLM"),
        ("SC007", "TinyForCausalLM", "TinyForCausalLM")]


@pytest.mark.parametrize("forward", [
    # hands the pair on as it is
    "return self.language_model(input_ids, positions)\n",
    "outputs = self.language_model.model(input_ids, positions)\nreturn outputs\n",
    # builds the pair itself when there is one (MiniCPM-style scaling)
    """
    outputs = self.language_model.model(input_ids, positions)
    if isinstance(outputs, tuple):
        hidden_states, aux_hidden_states = outputs
        return hidden_states / self.scale, aux_hidden_states
    return outputs / self.scale
    """,
    # a pipeline stage that is not the last hands its tensors on, the last one the model's output
    """
    hidden_states = self.language_model.model(input_ids, positions)
    if not self.last_rank:
        return IntermediateTensors({"hidden_states": hidden_states})
    return hidden_states
    """,
    # through a helper the reading does not follow: nothing is said
    "return self._run_language_model(input_ids, positions)[0]\n",
])
def test_forwards_that_hand_the_aux_outputs_on_or_cannot_be_told_are_backed(tmp_path, forward):
    files = {f"{MODELS}/tiny.py": TINY_FORWARD, f"{MODELS}/picture.py": declaring_picture(forward)}
    analysis = analyze(vllm_tree(tmp_path, files))
    assert [c for c in codes(analysis) if c[1] == "PictureForConditionalGeneration"] == []


SHORT = """
    import torch.nn as nn

    from .tiny import TinyForCausalLM, TinyModel


    class ShortModel(TinyModel):
        def forward(self, input_ids, positions):
            hidden_states, residual = self.embed(input_ids), None
            for layer in self.layers:
                hidden_states, residual = layer(positions, hidden_states, residual)
            if not self.last_rank:
                return IntermediateTensors({"hidden_states": hidden_states, "residual": residual})
            hidden_states = hidden_states + residual
            return hidden_states


    class ShortForCausalLM(TinyForCausalLM):
        def __init__(self, *, vllm_config, prefix=""):
            nn.Module.__init__(self)
            self.model = ShortModel()
"""


def test_a_holder_whose_own_forward_never_returns_the_aux_outputs_is_not_backed(tmp_path):
    # ShortModel inherits the mixin, so the default's assertion passes, but its forward (replacing Tiny's)
    # returns the hidden states alone; Short's __init__ alone runs, so TinyModel is not its holder too
    registry = REGISTRY.replace('"PlainForCausalLM": ("plain", "PlainForCausalLM"),',
                                '"PlainForCausalLM": ("plain", "PlainForCausalLM"),\n'
                                '        "ShortForCausalLM": ("short", "ShortForCausalLM"),')
    files = {f"{MODELS}/tiny.py": TINY_FORWARD, f"{MODELS}/short.py": SHORT, f"{MODELS}/registry.py": registry}
    root = vllm_tree(tmp_path, files)
    analysis = analyze(root)
    (found,) = [f for f in analysis.findings if f.class_name == "ShortForCausalLM"]
    line = line_of(root, f"{MODELS}/short.py", "return hidden_states")
    assert (found.code, found.delegate, found.inner_class) == ("SC007", "model", "ShortModel")
    assert found.message.startswith(
        "`ShortForCausalLM` declares `SupportsEagle3`, but `ShortModel.forward` drops the aux hidden states; "
        f"`return hidden_states` ({MODELS}/short.py:{line}) is not the `(hidden, aux)` pair the aux layers ask of "
        "it (it is the holder); a EAGLE3 run passes the check")
    assert [c for c in codes(analysis) if c[1] == "TinyForCausalLM"] == []


GLIMMER = """
    import torch.nn as nn

    from .interfaces import SupportsEagle3, SupportsMultiModal
    from .tiny import TinyModel


    class GlimmerForCausalLM(nn.Module, SupportsMultiModal, SupportsEagle3):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            with self._mark_language_model(vllm_config):
                self.model = TinyModel()
            self.lm_head = nn.Linear(8, 8)

        def forward(self, input_ids, positions):
            return self.model(input_ids, positions)
"""


def test_a_language_model_without_a_decoder_for_the_proposers_is_not_backed(tmp_path):
    # get_language_model() returns the marked decoder itself: the defaults find the mixin there (no `.model`
    # to unwrap), but the proposers read `<language model>.model` to share the embeddings
    registry = REGISTRY.replace('"PictureForConditionalGeneration": ("picture", "PictureForConditionalGeneration"),',
                                '"PictureForConditionalGeneration": ("picture", "PictureForConditionalGeneration"),\n'
                                '        "GlimmerForCausalLM": ("glimmer", "GlimmerForCausalLM"),')
    files = {f"{MODELS}/tiny.py": TINY_FORWARD, f"{MODELS}/glimmer.py": GLIMMER, f"{MODELS}/registry.py": registry}
    root = vllm_tree(tmp_path, files)
    analysis = analyze(root)
    (found,) = [f for f in analysis.findings if f.class_name == "GlimmerForCausalLM"]
    read = line_of(root, "vllm/v1/spec_decode/eagle.py", "language_model.model.embed_tokens")
    assert (found.code, found.severity, found.delegate, found.inner_class) == ("SC007", "error", "model", "TinyModel")
    assert found.message == (
        "`GlimmerForCausalLM` declares `SupportsEagle3`, but TinyModel has no `.model`; the proposers take "
        "`get_language_model()` (`self.model`) as its language model and read it; a EAGLE3 run "
        "passes the check at vllm/v1/worker/gpu_model_runner.py:10 and then stops with `AttributeError` when the "
        f"draft is loaded (vllm/v1/spec_decode/eagle.py:{read})")
    assert [(rel(root, s.path), s.span.line + 1) for s in found.call_sites] == [
        ("vllm/v1/worker/gpu_model_runner.py", 10), ("vllm/v1/spec_decode/eagle.py", read)]


def test_no_base_is_suggested_when_the_wrapper_would_drop_the_aux_outputs(tmp_path):
    forward = """
        hidden_states = self.language_model.model(input_ids, positions)
        return self.post_norm(hidden_states)
    """
    picture_file = declaring_picture(forward).replace(
        "class PictureForConditionalGeneration(nn.Module, SupportsMultiModal, SupportsEagle3):",
        "class PictureForConditionalGeneration(nn.Module, SupportsMultiModal):")
    files = {f"{MODELS}/tiny.py": TINY_FORWARD, f"{MODELS}/picture.py": picture_file}
    analysis = analyze(vllm_tree(tmp_path, files))
    assert codes(analysis) == [("SC007", "PlainForCausalLM", "SupportsEagle3", "error"),
                               ("SC009", "PictureForConditionalGeneration", "SupportsEagle3", "warning")]
    (found,) = [f for f in analysis.findings if f.code == "SC009"]
    assert "once declared, `PictureForConditionalGeneration.forward` drops the aux hidden states" in found.message
    assert declaration_edits(analysis, [found]).edits == ()


def test_a_get_language_model_that_returns_the_class_itself_is_what_the_proposers_take(tmp_path):
    # The class's own `.model` is the decoder the proposers read: backed
    glimmer = GLIMMER.replace("            with self._mark_language_model(vllm_config):\n"
                              "                self.model = TinyModel()\n", "            self.model = TinyModel()\n")
    glimmer += """
        def get_language_model(self):
            return self
    """
    registry = REGISTRY.replace('"PlainForCausalLM": ("plain", "PlainForCausalLM"),',
                                '"PlainForCausalLM": ("plain", "PlainForCausalLM"),\n'
                                '        "GlimmerForCausalLM": ("glimmer", "GlimmerForCausalLM"),')
    files = {f"{MODELS}/tiny.py": TINY_FORWARD, f"{MODELS}/glimmer.py": glimmer, f"{MODELS}/registry.py": registry}
    analysis = analyze(vllm_tree(tmp_path, files))
    assert [c for c in codes(analysis) if c[1] == "GlimmerForCausalLM"] == []


def test_without_get_language_model_the_proposers_read_the_class_own_decoder(tmp_path):
    # The defaults fall back to `self.language_model` (Tiny, backed), but the proposers, with no
    # get_language_model to call, take the class itself and read its `.model`, which it does not have
    files = {f"{MODELS}/tiny.py": TINY_FORWARD,
             f"{MODELS}/picture.py": picture(bases="nn.Module, SupportsEagle3")}
    analysis = analyze(vllm_tree(tmp_path, files))
    found = [f for f in analysis.findings if f.class_name == "PictureForConditionalGeneration" and f.code == "SC007"]
    assert [(f.delegate, f.inner_class) for f in found] == [("language_model.model", "PictureForConditionalGeneration")]
    assert "but PictureForConditionalGeneration has no `.model`; the proposers take the class itself as its " \
           "language model and read it" in found[0].message


def test_the_contract_lists_the_gated_protocol_capability_and_what_it_requires(tmp_path):
    root = vllm_tree(tmp_path)
    run = subprocess.run([sys.executable, "-m", "spec_contract", "contract", str(root), "--format", "json"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    [capability] = json.loads(run.stdout)["capabilities"]
    assert {k: capability[k] for k in ("name", "protocol", "check", "marker", "defaults")} == {
        "name": "EAGLE3", "protocol": "vllm.model_executor.models.interfaces.SupportsEagle3",
        "check": "supports_eagle3", "marker": "supports_eagle3",
        "defaults": ["set_aux_hidden_state_layers", "get_eagle3_default_aux_hidden_state_layers"]}
    runner = "vllm/v1/worker/gpu_model_runner.py"
    assert capability["gate_sites"] == [
        {"path": runner, "line": line_of(root, runner, "if not supports_eagle3"), "guarded": False,
         "phase": "start-up", "algorithm": "EAGLE3"}]  # the check runs while the model loads, for EAGLE-3 runs
    proposer = "vllm/v1/spec_decode/eagle.py"
    assert [(s["path"], s["line"]) for s in capability["reads"]] == [
        (proposer, line_of(root, proposer, "self.embed = language_model.model.embed_tokens"))]
    assert any("is an `EagleModelMixin` (`set_aux_hidden_state_layers` asserts it)" in need
               for need in capability["requires"])
    text = subprocess.run([sys.executable, "-m", "spec_contract", "contract", str(root)],
                          capture_output=True, text=True, timeout=120).stdout
    assert "capability EAGLE3: Protocol vllm.model_executor.models.interfaces.SupportsEagle3" in text
    assert f"    {runner}:{capability['gate_sites'][0]['line']}  if not supports_eagle3(self.get_model()):" in text


DRAFT_MODEL_PROPOSER = """
    class SpecDecodeBaseProposer:
        def propose(self, hidden):
            return self.model.compute_logits(hidden)

        def _maybe_share_lm_head(self, target_language_model):
            if self.model.lm_head is None:
                self.model.lm_head = target_language_model.lm_head


    class DraftModelProposer(SpecDecodeBaseProposer):
        def _maybe_share_lm_head(self, target_language_model):
            return None  # a standalone draft keeps its own head
"""


def test_draft_uses_on_a_generic_class_count_only_where_the_any_model_proposer_reaches_them(tmp_path):
    # Picture is no draft head: only DraftModelProposer would load it as a draft. It inherits `propose`
    # (compute_logits: a missing forward there crashes) and overrides `_maybe_share_lm_head` (the base's
    # lm_head read never runs for it); the EAGLE proposer only ever loads EAGLE heads.
    tiny = TINY.replace("            self.logits_processor = LogitsProcessor()\n",
                        "            self.logits_processor = LogitsProcessor()\n            self.lm_head = None\n\n"
                        "        def compute_logits(self, hidden):\n            return hidden\n")
    files = {f"{MODELS}/tiny.py": tiny, "vllm/v1/spec_decode/draft_model.py": DRAFT_MODEL_PROPOSER}
    analysis = analyze(vllm_tree(tmp_path, files))
    picture = [(f.code, f.member) for f in analysis.findings if f.class_name == "PictureForConditionalGeneration"]
    assert ("SC005", "compute_logits") in picture and ("SC005", "lm_head") not in picture
    assert {c.member for c in analysis.contract.for_role(Role.DRAFT)} >= {"compute_logits", "lm_head"}
    # without the profile's any-draft workers every draft use may meet any class, as before
    (tmp_path / "pyproject.toml").write_text('[tool.spec-contract]\nany-draft-workers = []\n')
    everywhere = [(f.code, f.member) for f in analyze(tmp_path).findings
                  if f.class_name == "PictureForConditionalGeneration"]
    assert ("SC005", "compute_logits") in everywhere and ("SC005", "lm_head") in everywhere


SPECULATOR = """
    class DraftModelSpeculator:
        def __init__(self, speculative_config):
            self.use_local_argmax_reduction = speculative_config.use_local_argmax_reduction
            self._share_mtp_indices = False

        def sample_draft(self, hidden):
            if self.use_local_argmax_reduction:
                return self.get_draft_top_tokens(hidden)
            return self.model.compute_logits(hidden)

        def get_draft_top_tokens(self, hidden):
            return self.model.get_top_tokens(hidden)

        def propose(self, hidden):
            if self._share_mtp_indices and hasattr(self.model.model, "set_skip_topk"):
                self.model.model.set_skip_topk(False)
            return self.sample_draft(hidden)


    class StandaloneARSpeculator(DraftModelSpeculator):
        pass
"""


def test_uses_under_a_flag_that_is_off_by_default_are_conditional(tmp_path):
    # compute_logits runs on every draft step: a missing forward is the draft warning. get_top_tokens runs
    # only in a method every caller reaches under `use_local_argmax_reduction`, the `.model` reads only past
    # `self._share_mtp_indices and …`: both flags are the profile's off-by-default ones (SC004).
    tiny = TINY.replace("            self.logits_processor = LogitsProcessor()\n",
                        "            self.logits_processor = LogitsProcessor()\n\n"
                        "        def compute_logits(self, hidden):\n            return hidden\n\n"
                        "        def get_top_tokens(self, hidden):\n            return hidden\n")
    files = {f"{MODELS}/tiny.py": tiny, "vllm/v1/worker/gpu/__init__.py": "",
             "vllm/v1/worker/gpu/spec_decode/__init__.py": "",
             "vllm/v1/worker/gpu/spec_decode/speculator.py": SPECULATOR}
    analysis = analyze(vllm_tree(tmp_path, files))
    found = {f.member: (f.code, f.condition) for f in analysis.findings
             if f.class_name == "PictureForConditionalGeneration" and f.member in ("compute_logits", "get_top_tokens", "model")}
    assert found == {"compute_logits": ("SC005", None),
                     "get_top_tokens": ("SC004", "use_local_argmax_reduction"),
                     "model": ("SC004", "_share_mtp_indices")}


def test_an_edit_that_moves_only_the_capability_gate_gives_what_a_cold_run_gives(tmp_path):
    # The capability findings cite the supports_eagle3() gate: lines moved in the runner alone must move
    # them in the editor's incremental analysis too, as a fresh analysis of the edited text has them.
    from spec_contract.engine import Project

    root = vllm_tree(tmp_path)
    runner = str(root / "vllm/v1/worker/gpu_model_runner.py")
    project = Project(root, load_config(root), use_cache=False)
    before = project.analyze()
    moved = "# a comment above\n\n" + (root / "vllm/v1/worker/gpu_model_runner.py").read_text()
    project.set_overlay(runner, moved)
    warm = project.analyze()
    (root / "vllm/v1/worker/gpu_model_runner.py").write_text(moved)
    cold = analyze(root)

    def sites(analysis):
        return sorted((f.code, f.class_name, tuple((s.path, s.span.line) for s in f.call_sites))
                      for f in analysis.findings if f.code in ("SC006", "SC007"))

    assert sites(warm) == sites(cold) != sites(before)


def test_hover_shows_each_class_verdict_on_the_protocol_capability(tmp_path):
    root = vllm_tree(tmp_path)
    analysis = analyze(root)

    def eagle3(module: str, name: str):
        cls = analysis.index.class_summary(ClassKey(f"vllm.model_executor.models.{module}", name))
        status = analysis.class_at(str(root / f"{MODELS}/{module}.py"), cls.span.line, cls.span.col)
        return next((a.state, a.why) for a in status.algorithms if a.algorithm == "EAGLE3")

    # the check passes; what the rest of the run reads decides (the proposers' guarded `get_language_model`)
    assert eagle3("tiny", "TinyForCausalLM")[0] in ("supported", "degraded")
    state, why = eagle3("picture", "PictureForConditionalGeneration")  # SC006: not declared, its LM backs it
    assert state == "refused" and why.startswith("add `SupportsEagle3` to the class's bases")
    state, why = eagle3("plain", "PlainForCausalLM")  # SC007: declared, the holder is not the mixin
    assert state == "refused" and "EagleModelMixin" in why
    assert [c for c in codes(analysis) if c[0] in ("SC006", "SC007")] == [
        ("SC006", "PictureForConditionalGeneration", "SupportsEagle3", "warning"),
        ("SC007", "PlainForCausalLM", "SupportsEagle3", "error")]


HELD = """
    import torch.nn as nn

    from .interfaces import SupportsEagle3
    from .plain import PlainModel


    class HeldLLMForCausalLM(nn.Module, SupportsEagle3):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.model = PlainModel()
            self.logits_processor = None


    class HeldVisionForConditionalGeneration(nn.Module):
        def __init__(self, *, vllm_config, prefix=""):
            super().__init__()
            self.language_model = HeldLLMForCausalLM(vllm_config=vllm_config)
"""


def test_a_language_model_no_registry_names_is_never_asked_the_protocol_gate(tmp_path):
    """The engine's isinstance gate (``supports_eagle3(self.get_model())``) asks the served class, the wrapper:
    a held language model that declares the Protocol with a holder that is not the mixin would fail it if it
    were served (PlainForCausalLM's SC007), but nothing serves it, so it gets no capability finding (vLLM
    0.33.0's Granite4VisionLLMForCausalLM had a false SC007 so); it is still checked as a held class."""
    registry = REGISTRY.replace(
        '"PictureForConditionalGeneration": ("picture", "PictureForConditionalGeneration"),',
        '"PictureForConditionalGeneration": ("picture", "PictureForConditionalGeneration"),\n'
        '        "HeldVisionForConditionalGeneration": ("held", "HeldVisionForConditionalGeneration"),')
    analysis = analyze(vllm_tree(tmp_path, {f"{MODELS}/registry.py": registry, f"{MODELS}/held.py": HELD}))
    assert "HeldLLMForCausalLM" in {key.qualname for key in analysis.held}  # held: checked, for what it is handed
    assert [f for f in analysis.findings if f.class_name == "HeldLLMForCausalLM"] == []
    assert ("SC007", "PlainForCausalLM", "SupportsEagle3", "error") in codes(analysis)  # the same shape, served


def test_a_class_that_does_not_declare_the_capability_nor_holds_one_that_does_is_refused_after_the_load(tmp_path):
    """The engine asks ``supports_eagle3`` of the loaded model: a plain class that does not declare it, and
    holds no language model that does, is refused only after its weights load, which costs what a crash costs.
    Such classes show no sign of meaning EAGLE3, so they are said once, on the check's line (SC011, a warning,
    listing them), and each class's file shows its own record; the matrix cell is a refusal."""
    bare = PLAIN.replace("class PlainForCausalLM(nn.Module, SupportsEagle3):", "class BareForCausalLM(nn.Module):")
    files = {f"{MODELS}/bare.py": bare,
             f"{MODELS}/registry.py": REGISTRY.replace('    _TEXT_GENERATION_MODELS = {\n', '    _TEXT_GENERATION_MODELS = {\n'
                                                       '        "BareForCausalLM": ("bare", "BareForCausalLM"),\n')}
    analysis = analyze(vllm_tree(tmp_path, files))
    (line,) = [f for f in analysis.findings if f.code == "SC011"]
    assert (line.path.endswith("gpu_model_runner.py"), line.member, [c.class_name for c in line.classes]) == (
        True, "SupportsEagle3", ["BareForCausalLM"])
    assert "refuses EAGLE3 for the 1 registered class that lacks `SupportsEagle3`" in line.message
    assert "only after loading the weights" in line.message
    (record,) = analysis.findings_for(str(tmp_path / MODELS / "bare.py"))
    assert (record.code, record.class_name, record.severity) == ("SC011", "BareForCausalLM", "warning")
    row = next(r for r in support_matrix(analysis).rows if r.class_name == "BareForCausalLM")
    assert next(c for c in row.cells if c.algorithm == "EAGLE3").state == "refused"


def test_a_wrapper_that_does_not_declare_the_capability_is_refused_whatever_its_hf_config_model_is(tmp_path):
    """The check asks the loaded model, the wrapper itself: whatever language model the HF config builds, a
    wrapper that does not declare the Protocol is refused after its weights load. What its language model
    declares cannot be told, so the wrapper is listed on the check's line (SC011), not an error."""
    files = {f"{MODELS}/picture.py": picture(build="hf_config=vllm_config.hf_config.text_config")}
    analysis = analyze(vllm_tree(tmp_path, files))
    (line,) = [f for f in analysis.findings if f.code == "SC011" and f.member == "SupportsEagle3"]
    assert "PictureForConditionalGeneration" in [c.class_name for c in line.classes]
    (record,) = [f for f in analysis.findings_for(str(tmp_path / MODELS / "picture.py"))
                 if f.class_name == "PictureForConditionalGeneration"]
    assert (record.code, record.severity) == ("SC011", "warning")
    assert "what its language model declares cannot be told here" in record.message
    row = next(r for r in support_matrix(analysis).rows if r.class_name == "PictureForConditionalGeneration")
    assert next(c for c in row.cells if c.algorithm == "EAGLE3").state == "refused"
