"""``spec-contract matrix``: every registered architecture × every algorithm, and its agreement with ``check``.

Agreement both ways, on an SGLang-shaped and a vLLM-shaped tree written for these tests: every finding that
means a crash (an error) or a refusal (a capability finding) has its cell in the state it means, and every
crash or refusal cell rests on a finding of that class (or, for a refusal, on a gate the class status says
no inner model passes either).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

from engine_trees import analyze
from launch_trees import ENGINE, engine_tree
from spec_contract.cli import main
from spec_contract.engine import Analysis, support_matrix
from spec_contract.engine.launch.algorithms import select
from spec_contract.engine.launch.verdict import selected
from spec_contract.report.matrix import cell_reason
from test_engine_vllm import MODELS, OWN_BEHIND_A_PICTURE, REGISTRY, vllm_tree


def agreement(analysis: Analysis) -> list[str]:
    """What disagrees between ``check``'s findings and the matrix's cells (empty: they agree)."""
    matrix = support_matrix(analysis)
    rows = {row.qualname: row for row in matrix.rows}
    selections = {name: select(analysis.contract, analysis.config.engine_package, name) for name in matrix.algorithms}
    out = []
    for f in analysis.findings:
        meaning = "crashes" if f.severity == "error" or f.classes else "refused" if f.code in ("SC003", "SC006") else None
        if meaning is None:
            continue
        # a worker-line finding (SC011) is about each class it lists, for each member listed
        about = [(c.class_qualname, m) for c in f.classes for m in c.members] or [(f.class_qualname, f.member)]
        for qualname, member in about:
            row = rows.get(qualname)
            if row is None:
                out.append(f"{f.code} {qualname}.{member}: no row")
                continue
            columns = [c for c in row.cells if selected(f, selections[c.algorithm]) and row.role in f.roles]
            if not columns:
                out.append(f"{f.code} {qualname}.{member}: no cell")
            for cell in columns:
                if cell.state != meaning and not (meaning == "refused" and cell.state == "crashes"):
                    out.append(f"{f.code} {qualname}.{member} × {cell.algorithm}: {cell.state}")
                if member not in {p.member for p in cell.problems if p.state == meaning}:
                    out.append(f"{f.code} {qualname}.{member} × {cell.algorithm}: member not in the cell")
    for row in matrix.rows:
        codes = {(f.code, m) for f in analysis.findings for c in f.classes if c.class_qualname == row.qualname
                 for m in c.members}
        codes |= {(f.code, f.member) for f in analysis.findings if f.class_qualname == row.qualname}
        for cell in row.cells:
            for problem in cell.problems:
                if problem.state == "crashes" and (problem.code, problem.member) not in codes \
                        or problem.state == "refused" and problem.code and (problem.code, problem.member) not in codes:
                    out.append(f"{row.architecture} × {cell.algorithm}: {problem.member} has no finding")
    return out


def cells(analysis: Analysis) -> dict[tuple[str, str], str]:
    return {(row.architecture, cell.algorithm): str(cell.state) for row in support_matrix(analysis).rows
            for cell in row.cells}


def test_the_sglang_shaped_matrix_agrees_with_check(tmp_path):
    analysis = analyze(engine_tree(tmp_path))
    assert cells(analysis) == {
        ("LlamaForCausalLM", "EAGLE"): "supported", ("LlamaForCausalLMEagle3", "EAGLE"): "supported",
        ("TowerForConditionalGeneration", "EAGLE"): "crashes",  # get_embed_and_head: every EAGLE-family run's
        ("LlamaForCausalLM", "EAGLE3"): "supported", ("LlamaForCausalLM", "DFLASH"): "supported",
        ("LlamaForCausalLMEagle3", "EAGLE3"): "supported", ("LlamaForCausalLMEagle3", "DFLASH"): "supported",
        ("LlamaForCausalLM", "DSPARK"): "supported", ("LlamaForCausalLMEagle3", "DSPARK"): "supported",
        # the model runner's capture check refuses it only after the load: a crash for the person waiting; DSPARK
        # runs set the flag it tests too (FROZEN_KV_MTP and the rest use nothing of the model here: no column)
        ("TowerForConditionalGeneration", "EAGLE3"): "crashes", ("TowerForConditionalGeneration", "DFLASH"): "crashes",
        ("TowerForConditionalGeneration", "DSPARK"): "crashes",
    }
    assert agreement(analysis) == []
    row = next(r for r in support_matrix(analysis).rows if r.class_name == "TowerForConditionalGeneration")
    assert row.notes == ("if a draft checkpoint names it, the draft role lacks set_embed_and_head",)


def test_the_vllm_shaped_matrix_agrees_with_check(tmp_path):
    analysis = analyze(vllm_tree(tmp_path))
    states = cells(analysis)
    assert states[("PlainForCausalLM", "EAGLE3")] == "crashes"  # SC007: declared, not backed
    assert states[("PictureForConditionalGeneration", "EAGLE3")] == "refused"  # SC006: not declared
    assert states[("TinyForCausalLM", "EAGLE3")] == "supported"
    assert agreement(analysis) == []


def test_a_check_no_inner_passes_fails_after_loading_with_the_worker_line_finding(tmp_path):
    analysis = analyze(engine_tree(tmp_path, {"srt/models/llama.py": """
        class LlamaForCausalLM:
            def get_embed_and_head(self):
                return None, None

            def set_embed_and_head(self, embed, head):
                pass

            def set_eagle3_layers_to_capture(self, layers=None):
                pass

        EntryClass = LlamaForCausalLM
    """}))
    row = next(r for r in support_matrix(analysis).rows if r.architecture == "LlamaForCausalLM")
    dflash = next(c for c in row.cells if c.algorithm == "DFLASH")
    assert (dflash.state, [(p.code, p.member) for p in dflash.problems]) == (
        "crashes", [("SC011", "set_dflash_layers_to_capture")])
    assert "set_dflash_layers_to_capture" in dflash.problems[0].message
    assert agreement(analysis) == []


def test_every_format_shows_the_same_cells(tmp_path, capsys):
    engine = engine_tree(tmp_path)
    base = ["matrix", "--no-cache", "--engine", str(engine)]
    assert main(base) == 0
    table = capsys.readouterr().out
    assert "TowerForConditionalGeneration  target  crashes    crashes    crashes    crashes" in table.splitlines()
    assert table.startswith(f"spec-contract support matrix: sglang ({engine})\n")
    assert "3 architectures × 4 algorithms: 4 crashes, 8 supported\nstates:\n" in table
    assert main([*base, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith("# spec-contract support matrix: sglang\n")
    assert "| TowerForConditionalGeneration | `TowerForConditionalGeneration` | target | crashes while the server " \
           "starts, after the weights load: the target lacks `get_embed_and_head` (SC001); a run dies first at " \
           "srt/speculative/eagle_worker.py:5 | crashes while the server starts, after the weights load: the target " \
           "lacks `get_embed_and_head`, `set_eagle3_layers_to_capture` (SC001); a run dies first at " \
           "srt/speculative/eagle_worker.py:5 | crashes while the server starts, after the weights load: the target " \
           "lacks `set_dflash_layers_to_capture` (SC001); a run dies first at srt/model_executor/model_runner.py:8 |" \
           in markdown
    assert "- **degraded**: runs, on the worker's guarded fallback path at every step" in markdown
    assert main([*base, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    tower = next(r for r in data["rows"] if r["class"] == "TowerForConditionalGeneration")
    assert tower["cells"]["EAGLE3"]["members"] == ["get_embed_and_head", "set_eagle3_layers_to_capture"]
    assert tower["cells"]["EAGLE3"]["fix"].startswith("forward `get_embed_and_head` to `self.language_model`")
    out = tmp_path / "matrix.html"
    assert main([*base, "--format", "html", "-o", str(out)]) == 0
    page = out.read_text()
    assert "default-src 'none'" in page and "http://" not in page and "https://" not in page
    assert json.loads(page.split('id="matrix-data">', 1)[1].split("</script>", 1)[0]) == data


def test_a_run_meets_the_checks_its_flags_select_but_not_other_algorithms_uses(tmp_path):
    """The model runner's capture check runs when the DFLASH capture flag is set, which DFLASH and DSPARK runs both
    set (read from the release, see SPEC_INFO): a class that fails it fails both, after the load; a use in the
    DFLASH worker is DFLASH's alone."""
    worker = """
        class DFlashWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                self.head = self.target_worker.model_runner.model.get_dflash_head()
    """
    runner = """
        class ModelRunner:
            def load_model(self):
                if self.eagle_use_aux_hidden_state:
                    self.model.set_eagle3_layers_to_capture()
                if self.dflash_use_aux_hidden_state:
                    if not hasattr(self.model, "set_dflash_layers_to_capture"):
                        raise ValueError("DFLASH needs set_dflash_layers_to_capture on the target")
                    self.model.set_dflash_layers_to_capture([1, 2])
    """
    half = """
        from sglang.srt.models.llama import LlamaForCausalLM


        class HalfForConditionalGeneration:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

            def set_dflash_layers_to_capture(self, layers):
                self.language_model.set_dflash_layers_to_capture(layers)

        EntryClass = [HalfForConditionalGeneration]
    """
    llama = ENGINE["srt/models/llama.py"].replace("\n        EntryClass", "\n            def get_dflash_head(self):\n"
                                                  "                return None\n\n        EntryClass")
    analysis = analyze(engine_tree(tmp_path, {"srt/speculative/dflash_worker.py": worker,
                                              "srt/model_executor/model_runner.py": runner,
                                              "srt/models/half.py": half, "srt/models/llama.py": llama}))
    states = cells(analysis)
    assert (states[("HalfForConditionalGeneration", "DFLASH")], states[("HalfForConditionalGeneration", "DSPARK")]) == \
        ("crashes", "supported")
    assert (states[("TowerForConditionalGeneration", "DFLASH")], states[("TowerForConditionalGeneration", "DSPARK")]) == \
        ("crashes", "crashes")
    assert agreement(analysis) == []
    # each cell names its own algorithm: a DSPARK run fails at the check its flag selects, said as DSPARK's
    tower = next(r for r in support_matrix(analysis).rows if r.class_name == "TowerForConditionalGeneration")
    dspark = next(c for c in tower.cells if c.algorithm == "DSPARK")
    assert "DFLASH" not in cell_reason(dspark)[0]


def test_each_platforms_class_of_a_per_platform_package_gets_a_row(tmp_path):
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
    }
    rows = {(r.architecture, r.qualname) for r in support_matrix(analyze(vllm_tree(tmp_path, files))).rows}
    assert {("FancyForCausalLM", "vllm.models.fancy.amd.FancyForCausalLM"),
            ("FancyForCausalLM (cuda)", "vllm.models.fancy.cuda.FancyForCausalLM")} <= rows


def test_a_matrix_of_a_tree_it_could_not_read_whole_exits_2(tmp_path, capsys):
    engine = engine_tree(tmp_path)
    (engine / "srt" / "models" / "gone.py").symlink_to(tmp_path / "nowhere.py")
    assert main(["matrix", "--no-cache", "--engine", str(engine)]) == 2
    captured = capsys.readouterr()
    assert "TowerForConditionalGeneration" in captured.out and "could not be read" in captured.err


def test_a_member_no_inner_model_has_is_a_crash_cell_with_the_check_s_finding(tmp_path):
    """A class with no inner model that lacks what every EAGLE run uses: the check lists it on the worker line
    (SC011, no sign of support), and the matrix shows the crash in every column whose run makes that use."""
    bare = """
        class BareForCausalLM:
            def __init__(self, config):
                self.config = config

        EntryClass = [BareForCausalLM]
    """
    analysis = analyze(engine_tree(tmp_path, {"srt/models/bare.py": bare}))
    listed = [(f.code, f.member) for f in analysis.findings if any(c.class_name == "BareForCausalLM" for c in f.classes)]
    assert ("SC011", "get_embed_and_head") in listed
    states = cells(analysis)
    assert (states[("BareForCausalLM", "EAGLE")], states[("BareForCausalLM", "EAGLE3")]) == ("crashes", "crashes")
    row = next(r for r in support_matrix(analysis).rows if r.class_name == "BareForCausalLM")
    eagle = row.cells[0]
    assert [(p.code, p.member, p.uses[0].phase) for p in eagle.problems] == [("SC011", "get_embed_and_head", "start-up")]
    assert agreement(analysis) == []


def test_an_error_the_status_model_does_not_list_is_still_a_crash_cell(tmp_path):
    """A forward to an inner model that lacks the member (SC013): the class 'has' it, so the status model
    lets the run pass the gate, but the check says the run crashes in the forward; the cell says so too."""
    files = {
        "srt/models/inner.py": """
            class InnerForCausalLM:
                def get_embed_and_head(self):
                    return None, None

            EntryClass = [InnerForCausalLM]
        """,
        "srt/models/handing.py": """
            from sglang.srt.models.inner import InnerForCausalLM


            class HandingForConditionalGeneration:
                def __init__(self, config):
                    self.language_model = InnerForCausalLM()

                def get_embed_and_head(self):
                    return self.language_model.get_embed_and_head()

                def set_dflash_layers_to_capture(self, layers):
                    self.language_model.set_dflash_layers_to_capture(layers)

            EntryClass = [HandingForConditionalGeneration]
        """,
    }
    analysis = analyze(engine_tree(tmp_path, files))
    broken = [(f.code, f.member) for f in analysis.findings if f.class_name == "HandingForConditionalGeneration"
              and f.severity == "error"]
    assert ("SC013", "set_dflash_layers_to_capture") in broken, broken
    assert cells(analysis)[("HandingForConditionalGeneration", "DFLASH")] == "crashes"
    assert agreement(analysis) == []


NOT_GENERATING = {
    # the engine's own generation test names BertModel; the profile's non-target globs name the classifier
    "srt/configs/model_config.py": ENGINE["srt/configs/model_config.py"].replace(
        "            return not is_embedding", '            if "BertModel" in model_architectures:\n'
        "                return False\n            return not is_embedding"),
    "srt/models/bert.py": """
        class BertModel:
            def __init__(self, config):
                self.config = config

        EntryClass = [BertModel]
    """,
    "srt/models/llama_classification.py": """
        from sglang.srt.models.llama import LlamaForCausalLM


        class LlamaForSequenceClassification:
            def __init__(self, config):
                self.model = LlamaForCausalLM(config)

        EntryClass = [LlamaForSequenceClassification]
    """,
    "srt/models/idea.py": ENGINE["srt/models/llama.py"].replace("LlamaForCausalLM", "iDeaForCausalLM"),
}


def test_only_classes_that_can_play_a_role_have_rows_in_one_stable_order(tmp_path, capsys):
    """Issue 37.4: embedding, classifier and reward models were rows, "draft: supported" in every column. The
    status model says which roles a class serves (none for what never generates); the matrix leaves those out
    and says so, and lists targets, then drafts, by name whatever its case."""
    engine = engine_tree(tmp_path, NOT_GENERATING)
    analysis = analyze(engine)
    serves = {s.name: s.serves for s in analysis.statuses()}
    assert (serves["BertModel"], serves["LlamaForSequenceClassification"]) == ((), ())
    assert (serves["LlamaForCausalLMEagle3"], serves["LlamaForCausalLM"]) == (("draft",), ("target", "draft"))
    matrix = support_matrix(analysis)
    assert [(r.architecture, str(r.role)) for r in matrix.rows] == [
        ("iDeaForCausalLM", "target"), ("LlamaForCausalLM", "target"), ("TowerForConditionalGeneration", "target"),
        ("LlamaForCausalLMEagle3", "draft")]
    assert matrix.left_out == ("BertModel", "LlamaForSequenceClassification")
    assert agreement(analysis) == []
    assert main(["matrix", "--no-cache", str(engine)]) == 0
    table = capsys.readouterr().out
    assert "BertModel" not in table.split("\nleft out: ")[0]
    assert "left out: 2 architectures whose class never generates" in table
    assert main(["matrix", "--no-cache", str(engine), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["left_out"] == ["BertModel", "LlamaForSequenceClassification"]


def test_matrix_takes_a_path_as_check_does_and_titles_the_engine_and_its_release(tmp_path, capsys):
    """Issue 37.4: ``matrix PATH`` was a usage error; the project around any PATH inside the tree is the engine
    read, as check finds it; --engine DIR still works, and both at once is one line, exit 2."""
    engine = engine_tree(tmp_path, {"_version.py": "__version__ = version = '0.5.99'\n"})
    assert main(["matrix", "--no-cache", str(engine / "srt" / "models"), "--format", "json"]) == 0
    inside = json.loads(capsys.readouterr().out)
    assert (inside["title"], inside["engine_version"], inside["root"]) == (
        "spec-contract support matrix: sglang 0.5.99", "0.5.99", str(engine))
    assert main(["matrix", "--no-cache", "--engine", str(engine), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == inside
    assert main(["matrix", str(engine), "--engine", str(engine)]) == 2
    assert capsys.readouterr().err == "spec-contract: error: pass the engine's tree as PATH or as --engine DIR, not " \
                                      "both\n"
    assert main(["matrix", str(tmp_path / "nowhere")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_matrix_of_the_engine_installed_for_python_reads_its_release_from_the_dist_info(tmp_path):
    """``--python``: the engine in that interpreter's site-packages, read as source (never imported), titled with
    the release its distribution's METADATA says."""
    root = tmp_path / "env"
    venv.create(root, with_pip=False)
    python = root / "bin" / "python"
    site = Path(subprocess.run([str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True, timeout=120).stdout.strip())
    shutil.copytree(engine_tree(tmp_path), site / "sglang")
    (site / "sglang" / "__init__.py").write_text("raise RuntimeError('the engine must never be imported')\n")
    (site / "sglang-0.5.7.dist-info").mkdir()
    (site / "sglang-0.5.7.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.7\n")
    result = subprocess.run([sys.executable, "-I", "-m", "spec_contract", "matrix", "--no-cache", "--python",
                             str(python)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"spec-contract support matrix: sglang 0.5.7 ({site / 'sglang'})\n")
    assert "TowerForConditionalGeneration  target  crashes" in result.stdout


def test_a_refusal_that_declaring_cannot_lift_names_its_finding_in_the_cell(tmp_path):
    """SC009 (not declared, and declaring is not enough) is the check's word for the EAGLE3 cell's refusal: the
    cell names it, as it names SC006's, so check and the matrix say the same member of the class."""
    analysis = analyze(vllm_tree(tmp_path, OWN_BEHIND_A_PICTURE))
    row = next(r for r in support_matrix(analysis).rows if r.class_name == "PictureForConditionalGeneration")
    eagle3 = next(c for c in row.cells if c.algorithm == "EAGLE3")
    assert (eagle3.state, [(p.code, p.member) for p in eagle3.problems]) == (
        "refused", [("SC009", "SupportsEagle3")])


def test_an_error_counts_only_in_runs_that_reach_a_use_of_it_unguarded(tmp_path):
    """A member whose missing forward is an error for the runs that read it plainly (DFLASH's capture check)
    but that EAGLE's worker reads through getattr with a default: EAGLE's cell is not a crash, as the class's
    status and hover say (it takes the fallback)."""
    eagle = ENGINE["srt/speculative/eagle_worker.py"].rstrip() + """
                self.head = getattr(self.target_worker.model_runner.model, "lm_head", None)
    """
    analysis = analyze(engine_tree(tmp_path, {"srt/speculative/eagle_worker.py": eagle,
                                              "srt/speculative/dflash_worker.py": """
        class DFlashWorker:
            def __init__(self, target_worker):
                self.target_worker = target_worker
                self.head = self.target_worker.model_runner.model.lm_head
                if not hasattr(self.target_worker.model_runner.model, "set_dflash_layers_to_capture"):
                    raise ValueError("DFLASH needs set_dflash_layers_to_capture on the target")
                self.target_worker.model_runner.model.set_dflash_layers_to_capture([1, 2])
    """, "srt/models/llama.py": ENGINE["srt/models/llama.py"].replace(
        "self.config = config\n", "self.config = config\n                self.lm_head = None\n"), "srt/models/tower.py": """
        from sglang.srt.models.llama import LlamaForCausalLM


        class TowerForConditionalGeneration:
            def __init__(self, config):
                self.language_model = LlamaForCausalLM(config)

            def set_dflash_layers_to_capture(self, layers):
                self.language_model.set_dflash_layers_to_capture(layers)

        EntryClass = [TowerForConditionalGeneration]
    """}))
    row = next(r for r in support_matrix(analysis).rows if r.class_name == "TowerForConditionalGeneration")
    lm_head = {c.algorithm: str(c.state) for c in row.cells if any(p.member == "lm_head" for p in c.problems)}
    crashes = {a for a, state in lm_head.items() if state == "crashes"}
    assert "EAGLE" not in crashes, lm_head
    assert any(f.member == "lm_head" and f.severity == "error" for f in analysis.findings
               if f.class_name == "TowerForConditionalGeneration"), [(f.code, f.member) for f in analysis.findings]
