"""``spec-contract preflight``: a launch line (or its flags) → the verdict of its target and draft classes,
the start-up refusals config files decide, exit 0/1/2; every bad input one line and exit 2.

The engine is the small SGLang-shaped tree of :mod:`launch_trees`, read with ``--engine``; its wrapper
lacks the two target members the Kimi-K2.5 wrapper lacked in SGLang 0.5.9.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_trees import line_of
from launch_trees import FORWARDING_TOWER, checkpoint, engine_tree, kimi_like
from spec_contract.cli import main
from spec_contract.engine import LaunchError, parse_launch
from test_engine_vllm import vllm_tree

ALLOW = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["preflight", "--no-cache", "--format", "json", *argv])
    return code, json.loads(capsys.readouterr().out)


def launch_line(target: Path, draft: Path, algorithm: str = "EAGLE3") -> list[str]:
    return ["--", "python", "-m", "sglang.launch_server", "--model-path", str(target), "--tp", "8",
            "--speculative-algorithm", algorithm, "--speculative-draft-model-path", str(draft), "--trust-remote-code"]


def problems(result: dict, role: str) -> list[tuple[str, str, str, list[tuple[str, int]]]]:
    verdict = next(v for v in result["verdicts"] if v["role"] == role)
    return [(p["state"], p["code"], p["member"], [(u["path"], u["line"]) for u in p["uses"]])
            for p in verdict["problems"]]


def test_the_kimi_shaped_launch_names_both_target_members_and_the_context_refusal(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(ALLOW, raising=False)
    engine = engine_tree(tmp_path)
    target, draft = kimi_like(tmp_path)
    code, result = run(capsys, "--engine", str(engine), *launch_line(target, draft))
    assert code == 1 and result["state"] == "crashes" and result["exit_code"] == 1
    worker, runner = "srt/speculative/eagle_worker.py", "srt/model_executor/model_runner.py"
    assert problems(result, "target") == [
        ("crashes", "SC001", "get_embed_and_head", [(worker, line_of(engine, worker, "get_embed_and_head"))]),
        ("crashes", "SC001", "set_eagle3_layers_to_capture",
         [(runner, line_of(engine, runner, "set_eagle3_layers_to_capture"))]),
    ]  # set_embed_and_head is a draft-role member: not this launch's business for the target
    assert problems(result, "draft") == []
    assert [p["uses"][0]["phase"] for p in result["verdicts"][0]["problems"]] == ["start-up", "start-up"]
    target_verdict = result["verdicts"][0]
    assert target_verdict["class"] == "TowerForConditionalGeneration"
    assert target_verdict["fix_command"] == f"spec-contract check --fix {engine / 'srt/models/tower.py'}"
    config = "srt/configs/model_config.py"
    assert [(c["check"], c["path"], c["line"]) for c in result["launch_checks"]] == [
        ("draft-context-length", config, line_of(engine, config, "raise ValueError"))]
    assert "131072" in result["launch_checks"][0]["message"] and "262144" in result["launch_checks"][0]["message"]


def test_the_environment_variable_lifts_the_refusal_and_leaves_the_members(tmp_path, capsys, monkeypatch):
    engine = engine_tree(tmp_path)
    target, draft = kimi_like(tmp_path)
    monkeypatch.setenv(ALLOW, "1")
    code, result = run(capsys, "--engine", str(engine), *launch_line(target, draft))
    assert code == 1 and result["launch_checks"] == []
    assert [m for _, _, m, _ in problems(result, "target")] == ["get_embed_and_head", "set_eagle3_layers_to_capture"]
    monkeypatch.delenv(ALLOW)  # the launch line's own environment words count too
    code, result = run(capsys, "--engine", str(engine), "--", f"{ALLOW}=true", *launch_line(target, draft)[1:])
    assert code == 1 and result["launch_checks"] == []


def test_a_wrapper_that_forwards_everything_launches(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(ALLOW, "1")
    engine = engine_tree(tmp_path, {"srt/models/tower.py": FORWARDING_TOWER})
    target, draft = kimi_like(tmp_path)
    code, result = run(capsys, "--engine", str(engine), "--model", str(target), "--algorithm", "eagle3",
                       "--draft", str(draft))
    assert (code, result["state"], problems(result, "target"), problems(result, "draft")) == (0, "supported", [], [])
    code = main(["preflight", "--no-cache", "--engine", str(engine), "--model", str(target), "--algorithm", "EAGLE",
                 "--draft", str(draft)])
    assert code == 0 and capsys.readouterr().out.rstrip().endswith("Nothing is known to fail in this launch.")


def test_a_check_the_class_fails_after_the_load_and_a_draft_head_lacking_a_member_both_crash(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(ALLOW, "1")
    engine = engine_tree(tmp_path, {"srt/models/llama_eagle3.py": """
        from sglang.srt.models.llama import LlamaForCausalLM


        class LlamaForCausalLMEagle3:
            def __init__(self, config):
                self.model = LlamaForCausalLM(config)

        EntryClass = [LlamaForCausalLMEagle3]
    """})
    target, draft = kimi_like(tmp_path)
    code, result = run(capsys, "--engine", str(engine), *launch_line(target, draft, "DFLASH"))
    assert code == 1
    # the check refuses DFLASH only after the target's weights have loaded: it costs what a crash costs
    assert [(s, c, m) for s, c, m, _ in problems(result, "target")] == [("crashes", "SC001", "set_dflash_layers_to_capture")]
    runner = "srt/model_executor/model_runner.py"
    said = f"raises at {runner}:{line_of(engine, runner, 'raise ValueError')}: the target model cannot capture aux " \
           "hidden states"
    assert said in result["verdicts"][0]["problems"][0]["message"]  # the engine's own words, from its raise
    code, result = run(capsys, "--engine", str(engine), *launch_line(target, draft, "EAGLE3"))
    assert [(s, m) for s, _, m, _ in problems(result, "draft")] == [("crashes", "set_embed_and_head")]


def test_a_check_whose_engine_line_is_missing_is_skipped_with_a_note(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(ALLOW, raising=False)
    engine = engine_tree(tmp_path, {"srt/models/tower.py": FORWARDING_TOWER}, drop=("srt/configs/model_config.py",))
    target, draft = kimi_like(tmp_path)
    code, result = run(capsys, "--engine", str(engine), *launch_line(target, draft))
    assert code == 0 and result["launch_checks"] == []
    assert result["notes"] == ["draft-context-length check skipped: the refusal naming "
                               f"{ALLOW} is not in this release's source"]


def test_a_hub_id_is_read_from_the_hugging_face_cache(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(ALLOW, "1")
    engine = engine_tree(tmp_path)
    cache = tmp_path / "hf" / "hub"
    repo = cache / "models--moonshotai--Tower-1"
    checkpoint(repo / "snapshots" / "0123abcd", "TowerForConditionalGeneration")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd\n")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    code, result = run(capsys, "--engine", str(engine), "--model", "moonshotai/Tower-1", "--algorithm", "EAGLE3")
    assert code == 1 and result["target"] == str(repo / "snapshots" / "0123abcd" / "config.json")


def test_vllm_serve_with_eagle3_crashes_on_a_declared_unbacked_class_and_is_refused_on_an_undeclared_one(
        tmp_path, capsys):
    engine = vllm_tree(tmp_path) / "vllm"
    draft = checkpoint(tmp_path / "eagle", "TinyForCausalLM")  # the tree has no EAGLE head file
    verdicts = {}
    for arch in ("PlainForCausalLM", "PictureForConditionalGeneration", "TinyForCausalLM"):
        target = checkpoint(tmp_path / arch, arch)
        spec = json.dumps({"method": "eagle3", "model": str(draft), "num_speculative_tokens": 3})
        code, result = run(capsys, "--engine", str(engine), "--", "vllm", "serve", str(target), "--speculative-config", spec)
        verdicts[arch] = (code, [(s, c, m) for s, c, m, _ in problems(result, "target")])
    assert verdicts == {
        "PlainForCausalLM": (1, [("crashes", "SC007", "SupportsEagle3")]),  # passes the engine's check, then dies
        "PictureForConditionalGeneration": (1, [("refused", "SC006", "SupportsEagle3")]),
        "TinyForCausalLM": (0, []),
    }


def test_the_flags_of_a_vllm_tree_read_it_as_vllm_without_profile(tmp_path, capsys):
    """``--engine`` names a vLLM tree and no launch line says whose it is: the tree says so, as for matrix
    (it was read as SGLang's, which found no worker files)."""
    engine = vllm_tree(tmp_path) / "vllm"
    target = checkpoint(tmp_path / "plain", "PlainForCausalLM")
    code, result = run(capsys, "--engine", str(engine), "--model", str(target), "--algorithm", "eagle3")
    assert (code, result["engine"]["profile"], [(s, c, m) for s, c, m, _ in problems(result, "target")]) == (
        1, "vllm", [("crashes", "SC007", "SupportsEagle3")])


def test_launch_lines_of_both_engines_parse():
    sglang = parse_launch(["sglang", "serve", "--model-path=/m", "--speculative-algorithm", "EAGLE3",
                           "--speculative_draft_model_path", "/d", "--context-length", "4096"])
    assert (sglang.engine, sglang.model, sglang.algorithm, sglang.draft, sglang.context_length) == \
        ("sglang", "/m", "EAGLE3", "/d", 4096)
    vllm = parse_launch(["vllm serve /models/q --tensor-parallel-size 2 --speculative-config "
                         "'{\"method\": \"eagle3\", \"model\": \"/models/e\", \"num_speculative_tokens\": 3}'"])
    assert (vllm.engine, vllm.model, vllm.algorithm, vllm.draft) == ("vllm", "/models/q", "eagle3", "/models/e")
    api = parse_launch(["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "/m"])
    assert (api.engine, api.model, api.algorithm) == ("vllm", "/m", None)
    with pytest.raises(LaunchError, match="is not JSON"):
        parse_launch(["vllm", "serve", "/m", "--speculative-config", "{method: eagle3}"])


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spec_contract", *argv], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def test_a_launch_of_an_algorithm_the_release_lacks_reads_as_the_engine_s_refusal_in_text_too(tmp_path):
    """The text report of an algorithm the release does not have: the refusal and the verdict line, exit 1 (it
    died with a KeyError: the early return gave the refusal no place in the order a run meets failures)."""
    engine = engine_tree(tmp_path)
    target, _ = kimi_like(tmp_path)
    done = _cli("preflight", "--no-cache", "--engine", str(engine), "--model", str(target), "--algorithm", "NOSUCH")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "this release has no speculative algorithm NOSUCH" in done.stdout
    assert done.stdout.rstrip().endswith("This launch will fail: first, while the server starts, the engine refuses "
                                         "the launch (algorithm).")


def test_every_bad_input_is_one_line_and_exit_2(tmp_path):
    engine = engine_tree(tmp_path)
    target, draft = kimi_like(tmp_path)
    (tmp_path / "empty").mkdir()
    unreadable = tmp_path / "unreadable"
    (unreadable / "config.json").mkdir(parents=True)  # a directory where the file should be: cannot be read
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    nameless = checkpoint(tmp_path / "nameless", "X")
    (nameless / "config.json").write_text('{"model_type": "llama"}')
    unknown = checkpoint(tmp_path / "unknown", "NoSuchModelForCausalLM")
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "config.json")  # read as plain text, it would block preflight for ever
    flags = ("preflight", "--no-cache", "--engine", str(engine))
    cases = {
        "missing config.json": ((*flags, "--model", str(tmp_path / "empty"), "--algorithm", "EAGLE3"),
                                "no config.json in"),
        "unreadable config.json": ((*flags, "--model", str(unreadable), "--algorithm", "EAGLE3"), "cannot read it"),
        "not JSON": ((*flags, "--model", str(broken), "--algorithm", "EAGLE3"), "not valid JSON"),
        "a FIFO as config.json": ((*flags, "--model", str(fifo), "--algorithm", "EAGLE3"),
                                  "cannot read it: not a regular file"),
        "no architecture": ((*flags, "--model", str(nameless), "--algorithm", "EAGLE3"), "names no architecture"),
        "unknown architecture": ((*flags, "--model", str(unknown), "--algorithm", "EAGLE3"),
                                 "names NoSuchModelForCausalLM, which the engine does not register"),
        "unparseable launch": ((*flags, "--", "torchrun", "serve.py", "--model-path", str(target)),
                               "cannot parse the launch line: `torchrun`"),
        "unbalanced quotes": ((*flags, "--", "vllm serve /m --speculative-config '{\"method\": 1"),
                              "cannot parse the launch line: No closing quotation"),
        "hub id not cached": ((*flags, "--model", "org/not-cached", "--algorithm", "EAGLE3"),
                              "pass the checkpoint's directory, or download its config first"),
        "no engine": (("preflight", "--engine", str(tmp_path / "nowhere"), "--model", str(target)),
                      "no such directory"),
        "nothing to check": ((*flags,), "nothing to check"),
    }
    for name, (argv, expected) in cases.items():
        result = _cli(*argv, env={"HF_HUB_CACHE": str(tmp_path / "hub")})
        lines = result.stderr.splitlines()
        assert (result.returncode, len(lines), result.stdout) == (2, 1, ""), (name, result.stderr)
        assert lines[0].startswith("spec-contract: error: ") and expected in lines[0], (name, lines[0])
        assert "Traceback" not in result.stderr, name


def test_an_engine_tree_it_cannot_read_whole_gives_no_all_clear(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(ALLOW, "1")
    engine = engine_tree(tmp_path, {"srt/models/tower.py": FORWARDING_TOWER})
    target, draft = kimi_like(tmp_path)
    (engine / "srt" / "models" / "gone.py").symlink_to(tmp_path / "nowhere.py")  # listed, cannot be read
    code, result = run(capsys, "--engine", str(engine), *launch_line(target, draft))
    assert code == 2 and result["state"] == "cannot-tell"
    assert any(note.startswith("could not read srt/models/gone.py") for note in result["notes"]), result["notes"]


def test_the_failures_come_in_the_order_a_run_meets_them_and_the_first_is_named(tmp_path, capsys, monkeypatch):
    """Issue 37.5: the Kimi-shaped launch fails three ways; SGLang starts the target's worker (its model runner
    asks for set_eagle3_layers_to_capture) before the speculative worker builds the draft's (whose config check
    refuses the context length), and only then asks the target for get_embed_and_head: the second of the three
    failed Kimi-K2.5 launches was the context refusal."""
    monkeypatch.delenv(ALLOW, raising=False)
    engine = engine_tree(tmp_path)
    target, draft = kimi_like(tmp_path)
    code, result = run(capsys, "--engine", str(engine), *launch_line(target, draft))
    runner, config, worker = "srt/model_executor/model_runner.py", "srt/configs/model_config.py", \
        "srt/speculative/eagle_worker.py"
    assert code == 1
    assert [(f["who"], f["state"], f["what"], f["path"], f["first"]) for f in result["failures"]] == [
        ("target", "crashes", "set_eagle3_layers_to_capture", runner, True),
        ("launch", "refused", "draft-context-length", config, False),
        ("target", "crashes", "get_embed_and_head", worker, False)]
    assert [f["when"] for f in result["failures"]] == [
        "while the target's worker starts, after the target's weights load",
        "while the draft's worker starts, before the draft's weights load",
        "while the server starts, after the weights load"]
    assert main(["preflight", "--no-cache", "--engine", str(engine), *launch_line(target, draft)]) == 1
    text = capsys.readouterr().out.splitlines()
    at = text.index("In the order a run meets them:")
    assert text[at + 1:] == [
        "  1. while the target's worker starts, after the target's weights load: the target crashes on "
        f"`set_eagle3_layers_to_capture` at {runner}:{line_of(engine, runner, 'set_eagle3_layers_to_capture')}",
        "  2. while the draft's worker starts, before the draft's weights load: the engine refuses the launch "
        f"(draft-context-length) at {config}:{line_of(engine, config, 'raise ValueError')}",
        "  3. while the server starts, after the weights load: the target crashes on `get_embed_and_head` at "
        f"{worker}:{line_of(engine, worker, 'get_embed_and_head')}",
        "This launch will fail: first, while the target's worker starts, after the target's weights load, the target "
        "crashes on `set_eagle3_layers_to_capture`."]


def test_failures_the_engine_order_does_not_tell_apart_are_a_tie(tmp_path, capsys, monkeypatch):
    """The target and the draft both fail in the EAGLE worker's start-up: which the run reaches first is the
    worker's call order, and preflight says so rather than guess."""
    monkeypatch.setenv(ALLOW, "1")
    engine = engine_tree(tmp_path, {
        "srt/models/tower.py": FORWARDING_TOWER.replace("def get_embed_and_head", "def _get_embed_and_head"),
        "srt/models/llama_eagle3.py": """
            from sglang.srt.models.llama import LlamaForCausalLM


            class LlamaForCausalLMEagle3:
                def __init__(self, config):
                    self.model = LlamaForCausalLM(config)

            EntryClass = [LlamaForCausalLMEagle3]
        """})
    target, draft = kimi_like(tmp_path)
    assert main(["preflight", "--no-cache", "--engine", str(engine), *launch_line(target, draft)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "This launch will fail: first, while the server starts, after the weights load, the target crashes on "
        "`get_embed_and_head`; or the draft crashes on `set_embed_and_head` (whichever the run reaches first).")


FROZEN_KV_MTP_WORKER = """
    class FrozenKVMTPWorker:
        def __init__(self, target_worker):
            self.target_worker = target_worker

        def forward_batch_generation(self, batch):
            if self.recurrent:
                return self.target_worker.model_runner.model.backbone_hidden_size
            return None
"""


def test_the_notes_name_only_the_workers_of_the_launchs_algorithm_and_say_target(tmp_path, capsys, monkeypatch):
    """Issue 37.5: an EAGLE3 launch's notes named a use in the frozen-KV MTP worker, which only a FROZEN_KV_MTP
    run builds (SGLang picks the worker class by the algorithm's name), and said "the class"."""
    monkeypatch.setenv(ALLOW, "1")
    engine = engine_tree(tmp_path, {"srt/models/tower.py": FORWARDING_TOWER,
                                    "srt/speculative/frozen_kv_mtp_worker.py": FROZEN_KV_MTP_WORKER})
    target, draft = kimi_like(tmp_path)
    code, eagle3 = run(capsys, "--engine", str(engine), *launch_line(target, draft))
    assert (code, eagle3["notes"]) == (0, [])
    code, frozen = run(capsys, "--engine", str(engine), "--model", str(target), "--algorithm", "FROZEN_KV_MTP")
    worker = "srt/speculative/frozen_kv_mtp_worker.py"
    assert (code, frozen["notes"]) == (0, [
        f"the target lacks `backbone_hidden_size`, which {worker}:{line_of(engine, worker, 'backbone_hidden_size')} "
        "uses (first request); check reports no crash for it, so it is not counted"])


def test_a_refusal_says_target_and_the_launchs_own_algorithm(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(ALLOW, "1")
    engine = engine_tree(tmp_path)
    target, draft = kimi_like(tmp_path)
    code, result = run(capsys, "--engine", str(engine), "--model", str(target), "--algorithm", "DSPARK")
    [refusal] = result["verdicts"][0]["problems"]
    # a DSPARK run sets the capture flag the model runner's check tests: refused there, only after the load
    assert code == 1 and refusal["message"].startswith(
        "the target lacks `set_dflash_layers_to_capture`: the engine's check at srt/model_executor/model_runner.py:")
    assert "refuses the run only after loading the weights" in refusal["message"]
