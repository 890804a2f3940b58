"""What ``spec-contract check`` prints (issue 23, items 4, 5, 8 and 9), run as a user runs it.

The tree is the demo laid out as a repository checkout (``repo/python/minisgl``, ``repo/.git``) with one more
wrapper, ``kimi.py``, that misses a forward the target's contract needs (an error) and one only a draft needs
(a warning). Run from the repository root, the project (``repo/python``) is not where the user stands, which
is what mixed the path bases before.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from spec_contract.progress import Progress
from spec_contract.report.text import WIDTH

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "examples" / "demo"
KIMI = '''from minisgl.models.llama import LlamaForCausalLM


class KimiForConditionalGeneration:
    def __init__(self, config):
        self.language_model = LlamaForCausalLM(config)

    def set_eagle3_layers_to_capture(self, layer_ids=None):
        return self.language_model.set_eagle3_layers_to_capture(layer_ids)


EntryClass = KimiForConditionalGeneration
'''
LINE = re.compile(r"(?P<path>\S+?):(?P<line>\d+):(?P<col>\d+): (?P<severity>error|warning|information|hint) "
                  r"(?P<code>SC\d{3}) (?P<message>.*)")
SITE = re.compile(r"(?:at|in) (\S+?\.py):\d+")  # a worker file named inside a message


def checkout(tmp: Path) -> Path:
    repo = tmp / "repo"
    shutil.copytree(DEMO, repo / "python", ignore=shutil.ignore_patterns("__pycache__", ".spec-contract-cache"))
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "python" / "minisgl" / "models" / "kimi.py").write_text(KIMI)
    return repo


def spec_contract(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run([sys.executable, "-m", "spec_contract", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**base, "SPEC_CONTRACT_CACHE_DIR": str(cwd / ".cache"), **(env or {})})


# -- text output -------------------------------------------------------------------------------------------

def test_every_finding_says_its_severity_and_every_path_is_relative_to_where_the_user_stands(tmp_path):
    repo = checkout(tmp_path)
    result = spec_contract("check", "--no-cache", cwd=repo)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    found = [m for m in map(LINE.fullmatch, lines) if m]
    assert sorted((Path(m["path"]).name, m["severity"], m["code"]) for m in found) == [
        ("kimi.py", "error", "SC001"), ("kimi.py", "warning", "SC005"),
        ("llava.py", "error", "SC001"), ("llava.py", "error", "SC001")]
    # Each line that is not a finding's first continues one (indented) or is the summary.
    assert all(LINE.fullmatch(line) or line.startswith("  ") or line.startswith(("Found ", "Checked "))
               for line in lines), lines
    named = [m["path"] for m in found] + [p for line in lines for p in SITE.findall(line)]
    assert any(p.startswith("python/minisgl/speculative/") for p in named), named  # a worker file, in a message
    assert all((repo / p).is_file() for p in named), [p for p in named if not (repo / p).is_file()]
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[-2:] == ["Found 4 findings: 3 errors, 1 warning.",
                          lines[-1]]
    assert re.fullmatch(r"Checked 3 model classes in 3 files of \d+ analysed \(\d+\.\d\ds\)\.", lines[-1]), lines[-1]


def test_a_note_on_stderr_names_files_from_where_the_user_stands_too(tmp_path):
    repo = checkout(tmp_path)
    result = spec_contract("check", "python/minisgl/speculative/eagle_worker.py", "--no-cache", cwd=repo)
    assert result.returncode == 1, result.stderr
    assert ("spec-contract: also reporting the classes elsewhere in the project that fail the uses in "
            "python/minisgl/speculative/eagle_worker.py") in result.stderr, result.stderr


def test_a_long_message_continues_on_indented_lines_each_a_terminal_can_show():
    from spec_contract.report.text import _wrapped, clauses

    assert clauses("`a; b` does x; the worker calls it at w.py:3; note") == [
        "`a; b` does x", "the worker calls it at w.py:3", "note"]
    words = " ".join(f"word{i}" for i in range(80))
    wrapped = _wrapped(words, "  ", 100)
    assert len(wrapped) > 1 and all(len(line) <= 100 for line in wrapped)
    assert all(line.startswith("  ") for line in wrapped[1:]) and " ".join(wrapped).split() == words.split()


def test_checking_one_file_says_what_was_checked_against_what_was_analysed(tmp_path):
    repo = checkout(tmp_path)
    result = spec_contract("check", "python/minisgl/models/kimi.py", "--no-cache", cwd=repo)
    assert result.returncode == 1, result.stderr
    last = result.stdout.splitlines()[-1]
    analysed = int(re.fullmatch(r"Checked 1 model class in 1 file of (\d+) analysed \(.*\)\.", last)[1])
    assert analysed > 1


def test_statistics_count_each_code_with_its_severity(tmp_path):
    repo = checkout(tmp_path)
    result = spec_contract("check", "--statistics", "--no-cache", cwd=repo)
    assert result.returncode == 1, result.stderr
    table = [line.split() for line in result.stdout.splitlines()[:-2]]
    assert table == [["3", "SC001", "error", "missing-forward"], ["1", "SC005", "warning", "missing-draft-forward"]]
    assert spec_contract("check", "--statistics", "--format", "json", cwd=repo).returncode == 2


def test_codes_are_case_insensitive(tmp_path):
    repo = checkout(tmp_path)
    result = spec_contract("check", "--select", "sc005", "--no-cache", cwd=repo)
    assert result.returncode == 0, result.stderr  # a warning only: the run passes
    assert [m["code"] for m in map(LINE.fullmatch, result.stdout.splitlines()) if m] == ["SC005"]


# -- usage and help ----------------------------------------------------------------------------------------

def test_a_bare_call_prints_the_usage(tmp_path):
    result = spec_contract(cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("usage: spec-contract") and "check" in result.stderr


def test_help_gives_the_exit_codes_three_examples_and_what_each_format_is_for(tmp_path):
    for command in ([], ["check"]):
        out = spec_contract(*command, "--help", cwd=tmp_path).stdout
        codes = out[out.index("exit codes:"):out.index("examples:")]
        assert [line.split()[0] for line in codes.splitlines()[1:] if line.strip()] == ["0", "1", "2"]
        examples = out[out.index("examples:"):].splitlines()[1:]
        assert len([line for line in examples if line.startswith("  spec-contract ")]) == 3
    text = " ".join(spec_contract("check", "--help", cwd=tmp_path).stdout.split())
    assert all(f"{fmt}:" in text for fmt in ("text", "json", "sarif", "github")), text


# -- --fix and --diff --------------------------------------------------------------------------------------

def test_fix_adds_what_fails_the_check_and_says_per_class_what_it_added_and_why(tmp_path):
    repo = checkout(tmp_path)
    kimi = repo / "python/minisgl/models/kimi.py"
    result = spec_contract("check", "--fix", "--no-cache", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr  # the errors are fixed; a warning stays
    out = result.stdout
    assert re.search(r"^python/minisgl/models/kimi\.py:4:7: added 1 member to `KimiForConditionalGeneration`\n"
                     r"  \+ `get_embed_and_head` forwarding to `self.language_model`: error SC001, the target "
                     r"model's contract calls it at python/minisgl/speculative/eagle_worker\.py:11 \(start-up\)$", out, re.M), out
    assert "python/minisgl/models/llava.py:6:7: added 2 members to `LlavaForConditionalGeneration`" in out
    assert ("Fixed 2 files: added 3 members to 2 classes. 1 other finding (below error level) can be fixed too: "
            "--select SC001,SC005.") in out
    assert "def get_embed_and_head" in kimi.read_text()
    assert "def set_embed_and_head" not in kimi.read_text()  # the draft-only warning was not asked for
    asked = spec_contract("check", "python/minisgl/models/kimi.py", "--fix", "--select", "SC005", cwd=repo)
    assert "`set_embed_and_head` forwarding to `self.language_model`: warning SC005" in asked.stdout, asked.stdout
    assert "def set_embed_and_head" in kimi.read_text()


def test_diff_shows_the_fix_and_writes_nothing(tmp_path):
    repo = checkout(tmp_path)
    kimi = repo / "python/minisgl/models/kimi.py"
    result = spec_contract("check", "python/minisgl/models/kimi.py", "--diff", "--no-cache", cwd=repo)
    assert result.returncode == 1, result.stderr  # the error is still there
    assert kimi.read_text() == KIMI
    diff = result.stdout.splitlines()
    assert diff[:2] == ["--- python/minisgl/models/kimi.py", "+++ python/minisgl/models/kimi.py"]
    added = [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")]
    assert "    def get_embed_and_head(self):" in added and not any("set_embed_and_head" in a for a in added)
    assert not [line for line in diff if line.startswith("-") and not line.startswith("---")]
    assert "would add 1 member to `KimiForConditionalGeneration`" in result.stderr
    assert "Would fix 1 file: add 1 member to 1 class." in result.stderr


# -- --format github ---------------------------------------------------------------------------------------

def test_github_names_files_from_the_repository_root_and_writes_the_step_summary(tmp_path):
    repo = checkout(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    for env in ({}, {"GITHUB_WORKSPACE": str(repo)}):  # the git root, or the workspace the runner names
        result = spec_contract("check", "--format", "github", "--no-cache", cwd=repo / "python" / "minisgl",
                               env={**env, "GITHUB_STEP_SUMMARY": str(summary)})
        assert result.returncode == 1, result.stderr
        *errors, notice = result.stdout.splitlines()
        assert len(errors) == 3 and all(c.startswith("::error file=python/minisgl/models/") for c in errors)
        assert all("calls it at python/minisgl/" in c for c in errors), errors  # in the message too
        assert notice == ("::notice title=spec-contract::1 finding below error level not annotated; the job's "
                          "summary lists all 4")
    table = summary.read_text().splitlines()
    assert table[0] == "earlier step"  # appended to, as the runner's other steps expect
    rows = [row for row in table if row.startswith("| ") and not row.startswith(("| Severity", "| ---"))]
    assert len(rows) == 2 * 4  # every finding, the warning too, each run
    assert rows[-1].startswith("| warning | SC005 | python/minisgl/models/kimi.py:4 | ")


# -- the progress indicator --------------------------------------------------------------------------------

class Terminal(io.StringIO):
    """A stream that says it is a terminal, and lets a test wait for what is written to it."""

    def __init__(self, terminal: bool = True) -> None:
        super().__init__()
        self.terminal = terminal
        self.written = threading.Event()

    def isatty(self) -> bool:
        return self.terminal

    def write(self, text: str) -> int:
        count = super().write(text)
        self.written.set()
        return count


def test_the_progress_indicator_shows_on_a_terminal_and_leaves_no_trace():
    stream = Terminal()
    with Progress(stream, "analysing", delay=0.0):
        assert stream.written.wait(30)
    drawn = stream.getvalue()
    assert "spec-contract: analysing" in drawn
    assert drawn.endswith("\r\x1b[K")  # the line is erased: what follows starts on a clean line


def test_the_progress_indicator_draws_on_a_terminal_without_a_thread_of_its_own():
    """A second thread would keep a cold check from forking (``parallel``): in a terminal it scanned through a
    fork server and checked every class on one core."""
    stream = Terminal()
    threads = threading.active_count()
    with Progress(stream, "analysing", delay=0.0):
        assert stream.written.wait(30)
        assert threading.active_count() == threads
    assert "spec-contract: analysing" in stream.getvalue() and stream.getvalue().endswith("\r\x1b[K")


def test_the_progress_indicator_is_silent_when_no_one_watches():
    stream = Terminal(terminal=False)
    with Progress(stream, "analysing", delay=0.0) as progress:
        assert "spec-contract-progress" not in [t.name for t in threading.enumerate()]  # nothing will draw
    assert stream.getvalue() == "" and not progress.shown
