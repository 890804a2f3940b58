"""One truth about a class in every front end (issue 37, item 1).

A class that crashes at a worker line only (SC011: it shows no sign of meaning the algorithm) is reported once,
on that line, in a check of the whole tree; a check of the class's own file (pre-commit on a model author's
change) must still say it crashes, at the class, naming the worker line, as the matrix and preflight do. The
walk over every class of the tree is ``benchmarks/agree.py``, which asks check, hover, the matrix and preflight
through the functions the front ends call; here it runs on a tree with each kind of class (a wrapper that
forgets a forward, a class that crashes at a worker line, one the engine's check refuses after the load, one
that passes everything).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace import PositionCodec
from spec_contract.engine import Project, load_config, support_matrix
from spec_contract.lsp.hover import Places, hover_for

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples/demo"
# its own embedding and head, so EAGLE works once it has get_embed_and_head; no capture for EAGLE3 at all
MISTRAL = """\
class MistralForCausalLM:
    def __init__(self, config):
        self.embed_tokens = None
        self.lm_head = None

    def set_embed_and_head(self, embed, head):
        self.embed_tokens = embed
        self.lm_head = head


EntryClass = MistralForCausalLM
"""
# everything EAGLE needs, and the capture EAGLE3's check asks for missing
QWEN = """\
class QwenForCausalLM:
    def __init__(self, config):
        self.embed_tokens = None
        self.lm_head = None
        self.capture_layers = []

    def get_embed_and_head(self):
        return self.embed_tokens, self.lm_head

    def set_embed_and_head(self, embed, head):
        self.embed_tokens = embed
        self.lm_head = head


EntryClass = QwenForCausalLM
"""


# a use past a flag another method sets from a helper's test of the model (a guard in another method): a class
# without the tested member never reaches it, so check reports nothing and the matrix counts nothing
FLAG = ("""    def draft(self, batch):
        return self.draft_model_runner.forward(batch)""", """    def init_projection(self):
        self._projection_enabled = _projection(self.target_worker.model_runner.model)

    def draft(self, batch):
        projected = (
            self._projection_enabled
            and self.target_worker.model_runner.model.should_project_hidden(batch)
        )
        return self.draft_model_runner.forward(batch, projected)


def _projection(model):
    return bool(getattr(model, "set_hidden_projector", None))""")


def _tree(tmp_path: Path, gate: bool, flag: bool = False) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    (root / "minisgl/models/mistral.py").write_text(MISTRAL)
    (root / "minisgl/models/qwen.py").write_text(QWEN)
    if gate:  # the model runner checks the capture before it calls it (a refusal, after the load)
        runner = root / "minisgl/model_executor/model_runner.py"
        runner.write_text(runner.read_text().replace(
            "        if self.eagle_use_aux_hidden_state:\n",
            "        if self.eagle_use_aux_hidden_state:\n"
            "            if not hasattr(self.model, \"set_eagle3_layers_to_capture\"):\n"
            "                raise ValueError(\"EAGLE3 needs set_eagle3_layers_to_capture\")\n"))
    if flag:
        worker = root / "minisgl/speculative/eagle_worker.py"
        worker.write_text(worker.read_text().replace(*FLAG))
    return root


def _check(root: Path, *args: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "spec_contract", "check", *args, "--format", "json",
                           "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["findings"]


def test_a_check_of_the_model_file_names_the_worker_line_its_class_crashes_at(tmp_path):
    root = _tree(tmp_path, gate=False)
    whole = _check(root)
    (line,) = [f for f in whole if f["code"] == "SC011"]
    assert line["path"].endswith("model_executor/model_runner.py")  # the whole tree: once, on the worker line
    assert {c["class"] for c in line["classes"]} == {"MistralForCausalLM", "QwenForCausalLM"}
    alone = _check(root, "minisgl/models/mistral.py")
    assert sorted((f["code"], f["class"], f["method"]) for f in alone) == [
        ("SC010", "MistralForCausalLM", "get_embed_and_head"),
        ("SC011", "MistralForCausalLM", "set_eagle3_layers_to_capture")]
    crash = next(f for f in alone if f["code"] == "SC011")
    assert (crash["path"].endswith("models/mistral.py"), crash["line"], crash["severity"]) == (
        True, 1, line["severity"])
    ((path, number),) = [(s["path"], s["line"]) for s in crash["call_sites"]]
    assert line["path"].endswith(path) and number == line["line"]
    assert "crashes there" in crash["message"]


@pytest.mark.parametrize(("gate", "flag"), [(False, False), (True, False), (False, True)],
                         ids=["crash", "refused-after-load", "guard-in-another-method"])
def test_check_hover_matrix_and_preflight_agree_on_every_class(tmp_path, gate, flag):
    root = _tree(tmp_path, gate, flag)
    done = subprocess.run([sys.executable, str(REPO / "benchmarks/agree.py"), str(root)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    assert summary == ("4 classes × 2 algorithms = 8 cells: check disagrees with the matrix on 0 classes, "
                       "hover on 0 cells, preflight on 0 cells"), summary


def test_hover_does_not_count_a_crash_no_finding_reports(tmp_path):
    """The hover's algorithm lines say what the matrix says: a use past a flag another method sets from a helper's
    test of the model (``bool(getattr(model, "set_hidden_projector", None))``) is never reached by a class
    without that member, so check reports nothing, the matrix counts nothing, and hover neither counts nor lists
    it: the run is degraded, for want of the tested member."""
    root = _tree(tmp_path, gate=False, flag=True)
    analysis = Project(root, load_config(root, None, None)).analyze()
    (row,) = [r for r in support_matrix(analysis).rows if r.class_name == "LlamaForCausalLM"]
    assert {str(c.state) for c in row.cells} <= {"supported", "degraded"}
    path = str(root / "minisgl/models/llama.py")
    lines = analysis.source(path).splitlines(keepends=True)
    hover = hover_for(analysis, path, row.line - 1, lines[row.line - 1].index("LlamaForCausalLM"),
                      Places(str, links=False), lambda _: lines, PositionCodec(types.PositionEncodingKind.Utf32), False)
    eagle = next(line for line in hover.contents.value.splitlines() if line.startswith("- EAGLE:"))
    assert eagle.startswith("- EAGLE: supported, degraded: it lacks") and "`set_hidden_projector`" in eagle, eagle
    assert "should_project_hidden" not in hover.contents.value
