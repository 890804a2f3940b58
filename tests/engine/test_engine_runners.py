"""Each model runner's lines serve only the algorithms it runs, read from the engine's list of what it refuses.

vLLM's config refuses a DSPARK launch on the V1 model runner before any weight loads
(``_get_v1_model_runner_unsupported_features`` appends for ``method == "dspark"``), so a DSPARK run never reaches
V1's proposers or V1's ``supports_eagle3`` check: its uses and its refusal are V2's (issue 36, the V1/V2 item).
"""

from __future__ import annotations

from engine_trees import analyze
from test_engine_vllm import vllm_tree

CONFIG = """
    class VllmConfig:
        def _get_v1_model_runner_unsupported_features(self):
            unsupported = []
            if self.parallel_config.prefill_context_parallel_size > 1:
                unsupported.append("prefill context parallel")
            if self.speculative_config:
                if self.speculative_config.method == "dspark":
                    unsupported.append("dspark speculative decoding")
                if self.speculative_config.parallel_drafting and self.speculative_config.method != "dflash":
                    unsupported.append("parallel drafting")
            return unsupported
"""

# the V1 proposer every drafting run builds, and V2's DSPARK speculator
PROPOSER = """
    class EagleProposer:
        def load_model(self, target_model):
            self.hidden = self.model.mask_hidden
"""

SPECULATOR = """
    class DSparkSpeculator:
        def load_model(self, target_model):
            self.hidden = self.model.mask_hidden
"""

INIT = """
    def init_speculator(vllm_config, device):
        if vllm_config.speculative_config.method == "dspark":
            from vllm.v1.worker.gpu.spec_decode.dspark.speculator import DSparkSpeculator
            return DSparkSpeculator(vllm_config, device)
"""

V2_RUNNER = """
    from vllm.model_executor.models.interfaces import supports_eagle3


    class ModelRunner:
        def load_model(self):
            if self.speculative_config.method in ("eagle3", "dspark"):
                if not supports_eagle3(self.model):
                    raise ValueError("no EAGLE-3 support")
"""


def _analysis(tmp_path, config: str = CONFIG):
    root = vllm_tree(tmp_path, {
        "vllm/config/vllm.py": config,
        "vllm/v1/spec_decode/eagle.py": PROPOSER,
        "vllm/v1/worker/gpu/__init__.py": "",
        "vllm/v1/worker/gpu/model_runner.py": V2_RUNNER,
        "vllm/v1/worker/gpu/spec_decode/__init__.py": INIT,
        "vllm/v1/worker/gpu/spec_decode/dspark/__init__.py": "",
        "vllm/v1/worker/gpu/spec_decode/dspark/speculator.py": SPECULATOR,
    })
    speculative = root / "vllm/config/speculative.py"
    speculative.write_text(speculative.read_text().replace('"ngram"]', '"ngram", "dspark"]'))
    return analyze(root)


def _served(analysis, member: str) -> dict[str, frozenset[str] | None]:
    return {site.path.rsplit("/v1/", 1)[1]: site.algorithms for entry in analysis.contract.entries
            if entry.member == member for site in entry.call_sites}


def test_a_runner_s_lines_serve_no_algorithm_its_config_refuses(tmp_path):
    """V1 refuses DSPARK under a comparison of the method (inside ``if self.speculative_config:``, which every
    speculative run passes); the parallel-drafting refusal is under a flag, so it refuses nothing for certain."""
    served = _served(_analysis(tmp_path), "mask_hidden")
    assert served["worker/gpu/spec_decode/dspark/speculator.py"] == frozenset({"DSPARK"})
    assert served["spec_decode/eagle.py"] is not None and "DSPARK" not in served["spec_decode/eagle.py"]
    assert {"EAGLE", "EAGLE3", "MTP"} <= served["spec_decode/eagle.py"]


def test_without_the_refusal_the_v1_lines_serve_dspark_too(tmp_path):
    served = _served(_analysis(tmp_path, CONFIG.replace('== "dspark"', '== "nothing"')), "mask_hidden")
    assert "DSPARK" in (served["spec_decode/eagle.py"] or {"DSPARK"})


def test_each_runner_s_capability_check_stops_its_own_runs(tmp_path):
    """The V1 runner's ``supports_eagle3`` check never sees a DSPARK run: the V2 runner's does."""
    analysis = _analysis(tmp_path)
    (gated,) = analysis.capabilities
    served = {site.path.rsplit("/v1/", 1)[1]: site.algorithms for site in gated.sites}
    assert "DSPARK" not in served["worker/gpu_model_runner.py"]
    assert "DSPARK" in served["worker/gpu/model_runner.py"]
    # the finding says where each run stops: V1's check, and V2's for the runs only V2 runs
    (message,) = [f.message for f in analysis.findings if f.code == "SC006"]
    assert "by the check at vllm/v1/worker/gpu_model_runner.py:" in message
    assert "(for DSPARK: vllm/v1/worker/gpu/model_runner.py:" in message
