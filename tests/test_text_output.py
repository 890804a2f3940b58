"""Text output a maintainer acts on (issue 37, items 3 and 7), run as a user runs ``spec-contract check``.

The tree is SGLang-shaped and written here, with class names as long as real ones: one wrapper of each kind
of finding (an error, three warnings, two information, a hint) in files whose alphabetical order is not the
severities', so that output sorted by file would put the information first and the error in the middle.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = """
class EAGLEWorker:
    def __init__(self, target_worker, draft_runner):
        self.target_worker = target_worker
        self.draft_runner = draft_runner
        embed, head = self.target_worker.model_runner.model.get_embed_and_head()
        self.draft_runner.model.set_embed_and_head(embed, head)
        model = self.target_worker.model_runner.model
        if hasattr(model, "get_hidden_size"):
            self.hidden = model.get_hidden_size()
"""
# the EAGLE3 gate, while the model runner starts (a path as deep as SGLang's)
RUNNER = """
class ModelRunner:
    def init_aux_capture(self):
        if self.eagle_use_aux_hidden_state:
            if not hasattr(self.model, "set_eagle3_layers_to_capture"):
                raise ValueError("EAGLE3 needs set_eagle3_layers_to_capture")
            self.model.set_eagle3_layers_to_capture(self.layer_ids)
"""
QWEN = """
import torch


class Qwen3MoeLLMModel(torch.nn.Module):
    def __init__(self, config):
        self.embed_tokens = Embedding(config)
        self.layers_to_capture = []


class Qwen3MoeLLMForCausalLM(torch.nn.Module):
    def __init__(self, config):
        self.config = config
        self.model = Qwen3MoeLLMModel(config)
        self.lm_head = Head(config)
        self.capture_aux_hidden_states = False

    def get_embed_and_head(self):
        return self.model.embed_tokens.weight, self.lm_head.weight

    def set_embed_and_head(self, embed, head):
        self.model.embed_tokens.weight = embed
        self.lm_head.weight = head

    def get_hidden_size(self):
        return self.config.hidden_size

    def set_eagle3_layers_to_capture(self, layer_ids):
        self.capture_aux_hidden_states = True
        self.model.layers_to_capture = [i + 1 for i in layer_ids]


class Embedding(torch.nn.Module):
    pass


class Head(torch.nn.Module):
    pass


EntryClass = Qwen3MoeLLMForCausalLM
"""
# classes holding the same parts as Qwen's: one with part of EAGLE3 (refused, could support it: a hint), and two
# with none of EAGLE (one warning on the worker line, listing both)
SIBLINGS = """
import torch

from pkg.models.qwen3_moe import Head, Qwen3MoeLLMModel


class Gemma3nForConditionalGenerationTextOnly(torch.nn.Module):
    def __init__(self, config):
        self.config = config
        self.model = Qwen3MoeLLMModel(config)
        self.lm_head = Head(config)
        self.capture_aux_hidden_states = False

    def get_embed_and_head(self):
        return None, None

    def set_embed_and_head(self, embed, head):
        pass


class BareMultimodalReasoningForCausalLM(torch.nn.Module):
    def __init__(self, config):
        self.lm_head = None


class OtherMultimodalReasoningForCausalLM(torch.nn.Module):
    def __init__(self, config):
        self.lm_head = None


EntryClass = [Gemma3nForConditionalGenerationTextOnly, BareMultimodalReasoningForCausalLM,
              OtherMultimodalReasoningForCausalLM]
"""
MEMBERS = ("get_embed_and_head", "set_embed_and_head", "get_hidden_size", "set_eagle3_layers_to_capture")


def wrapper(name: str, missing: str) -> str:
    """A wrapper of Qwen's language model in ``self.language_model`` that forwards every member but ``missing``."""
    body = "".join(f"\n    def {m}(self, *args):\n        return self.language_model.{m}(*args)\n"
                   for m in MEMBERS if m != missing)
    return (f"from pkg.models.qwen3_moe import Qwen3MoeLLMForCausalLM\n\n\nclass {name}:\n"
            f"    def __init__(self, config):\n        self.language_model = Qwen3MoeLLMForCausalLM(config)\n"
            f"{body}\n\nEntryClass = {name}\n")


# the release's algorithms (an Enum beside its predicates) and the flag the runner tests, set for EAGLE-3 runs
SPEC_INFO = """
from enum import Enum, auto


class SpeculativeAlgorithm(Enum):
    EAGLE = auto()
    EAGLE3 = auto()
    NONE = auto()

    def is_eagle3(self):
        return self == SpeculativeAlgorithm.EAGLE3


def resolve_aux_hidden_state(runner, spec_algorithm):
    runner.eagle_use_aux_hidden_state = spec_algorithm.is_eagle3()
"""
FILES = {
    "pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": "",
    "pkg/speculative/spec_info.py": SPEC_INFO,
    "pkg/model_executor/__init__.py": "", "pkg/model_executor/model_runner_components/__init__.py": "",
    "pkg/speculative/eagle_worker.py": WORKER,
    "pkg/model_executor/model_runner_components/attention_backend_setup.py": RUNNER,
    "pkg/models/qwen3_moe.py": QWEN, "pkg/models/siblings.py": SIBLINGS,
    "pkg/models/a_optional.py": wrapper("Qwen3OmniMoeThinkerForConditionalGeneration", "get_hidden_size"),
    "pkg/models/a_optional_too.py": wrapper("Qwen3OmniMoeTalkerForConditionalGeneration", "get_hidden_size"),
    "pkg/models/b_draft.py": wrapper("Qwen3VLMoeForConditionalGenerationDraft", "set_embed_and_head"),
    "pkg/models/c_target.py": wrapper("KimiK25ForConditionalGeneration", "get_embed_and_head"),
    "pkg/models/d_gated.py": wrapper("Qwen3OmniMoeForConditionalGeneration", "set_eagle3_layers_to_capture"),
}
LINE = re.compile(r"(?P<path>\S+?):(?P<line>\d+):(?P<col>\d+): (?P<severity>error|warning|information|hint) "
                  r"(?P<code>SC\d{3}) (?P<message>.*)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
ORDER = ("error", "warning", "information", "hint")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text.lstrip("\n"), encoding="utf-8")
    return tmp_path


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    return {**env, "SPEC_CONTRACT_CACHE_DIR": str(root / ".cache"), **extra}


def check(root: Path, *args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-m", "spec_contract", "check", *args], cwd=cwd or root,
                          capture_output=True, text=True, timeout=300, env=_env(root, **env))


def on_terminal(root: Path, *args: str, **env: str) -> str:
    """Standard output of ``check`` when it is a terminal (a pseudo-terminal this test reads)."""
    main, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-I", "-m", "spec_contract", "check", *args], cwd=root,
                               stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.DEVNULL,
                               env=_env(root, TERM="xterm", **env))
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    process.wait(timeout=300)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def findings(output: str) -> list[re.Match[str]]:
    return [m for m in map(LINE.fullmatch, output.splitlines()) if m]


def test_errors_come_first_then_warnings_then_information_each_by_path_and_line(tree):
    result = check(tree)
    assert result.returncode == 1, result.stderr
    found = [(m["severity"], m["path"], int(m["line"]), m["code"]) for m in findings(result.stdout)]
    assert found == sorted(found, key=lambda f: (ORDER.index(f[0]), f[1], f[2])), found
    assert [f[3] for f in found] == ["SC001", "SC001", "SC011", "SC005", "SC011", "SC002", "SC002"]
    # each finding's further clauses stay under it
    lines = result.stdout.splitlines()
    assert all(LINE.fullmatch(line) or line.startswith("  ") for line in lines[:-2]), lines


def test_each_message_says_what_fails_and_where_in_a_first_line_of_at_most_160_characters(tree):
    result = check(tree, "--hints")
    lines = result.stdout.splitlines()
    heads = [(i, m) for i, m in enumerate(map(LINE.fullmatch, lines)) if m]
    assert {m["code"] for _, m in heads} == {"SC001", "SC002", "SC005", "SC011", "SC012"}
    for i, head in heads:
        assert len(head["message"]) <= 160, lines[i]
        assert lines[i + 1].startswith("  = "), lines[i:i + 2]  # the rest goes on `= ` lines, none wrapped
    assert all(len(line) <= 160 for line in lines if line.startswith("  = "))


def test_quiet_prints_the_errors_alone_and_keeps_the_exit_status(tree):
    loud, quiet = check(tree), check(tree, "--quiet")
    assert quiet.returncode == loud.returncode == 1, quiet.stderr
    assert [m["severity"] for m in findings(quiet.stdout)] == ["error", "error"]
    assert quiet.stdout.splitlines()[-2] == ("Found 2 findings: 2 errors; 3 warnings, 2 information, 1 hint not shown "
                                             "(drop --quiet and add --hints to see them).")
    # a run with warnings only passes, quiet or not
    warned = check(tree, "--quiet", "--select", "SC011,SC005")
    assert (warned.returncode, findings(warned.stdout)) == (0, [])
    assert warned.stdout.splitlines()[-2] == "No findings to show; 3 warnings not shown (drop --quiet to see them)."
    assert check(tree, "--quiet", "--format", "json").returncode == 2


def test_the_summary_counts_the_hidden_hints_and_says_how_to_see_them(tree):
    summary = check(tree).stdout.splitlines()[-2]
    assert summary == ("Found 7 findings: 2 errors, 3 warnings, 2 information; 1 hint not shown "
                       "(add --hints to see them).")
    shown = check(tree, "--hints").stdout
    assert [m["code"] for m in findings(shown)][-1] == "SC012"
    assert shown.splitlines()[-2] == "Found 8 findings: 2 errors, 3 warnings, 2 information, 1 hint."


def test_statistics_list_the_errors_first_then_by_count(tree):
    table = [line.split() for line in check(tree, "--statistics").stdout.splitlines()[:-2]]
    assert table == [["2", "SC001", "error", "missing-forward"],
                     ["2", "SC011", "warning", "unrefused-crash"],
                     ["1", "SC005", "warning", "missing-draft-forward"],
                     ["2", "SC002", "information", "missing-optional-forward"]]


def test_colour_on_a_terminal_unless_no_color_and_in_a_pipe_only_when_asked(tree):
    coloured = on_terminal(tree)
    assert "\x1b[1;31merror\x1b[0m" in coloured and "\x1b[1;33mwarning\x1b[0m" in coloured, coloured
    assert ANSI.sub("", coloured).startswith("pkg/models/c_target.py:4:7: error SC001 "), coloured
    assert "\x1b[" not in on_terminal(tree, NO_COLOR="1")
    assert "\x1b[" in on_terminal(tree, NO_COLOR="1", FORCE_COLOR="1")  # ruff's order: FORCE_COLOR wins
    assert "\x1b[" not in on_terminal(tree, "--color", "never", FORCE_COLOR="1")
    plain = check(tree).stdout
    assert "\x1b[" not in plain
    for forced in (check(tree, FORCE_COLOR="1").stdout, check(tree, "--color", "always").stdout):
        assert "\x1b[" in forced
        # colour adds nothing else: the same lines once its sequences are taken out (but the run's time)
        assert ANSI.sub("", forced).splitlines()[:-1] == plain.splitlines()[:-1]


def test_from_a_folder_below_the_project_every_file_is_named_from_there(tree):
    # issue 37 item 7: worker files inside messages were absolute; now `../speculative/eagle_worker.py:5`, as ruff
    # names files relative to the current directory
    models = tree / "pkg" / "models"
    result = check(tree, "--hints", cwd=models)
    assert result.returncode == 1, result.stderr
    named = re.findall(r"(?<![\w./-])([\w./-]+\.py):\d+", result.stdout)
    assert "../speculative/eagle_worker.py" in named
    assert "../model_executor/model_runner_components/attention_backend_setup.py" in named
    assert "c_target.py" in named
    assert all((models / path).is_file() for path in named), named
    assert str(tree) not in result.stdout
    # a file outside every project checked stays absolute
    from spec_contract.report import from_cwd

    elsewhere = tree.parent / "elsewhere.py"
    assert from_cwd(str(elsewhere), models, [tree]) == str(elsewhere)

