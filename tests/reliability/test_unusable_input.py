"""Input that cannot be used is one line and exit 2, and text from a checkpoint reaches the terminal as text
(issue 38, items 3, 4 and 10).

A ``config.json`` or ``--speculative-config`` nested 2,000 levels deep ended in a ``RecursionError`` traceback and
exit 1, which ``preflight`` means as "this launch will fail". A path component over 255 bytes (``--model-path``,
``--engine``, ``--config``, a hub-id-shaped ``org/<long>``) and ``~nosuchuser/…`` were tracebacks too. An
architecture name from a third-party ``config.json`` reached the terminal as it was: escape sequences (clear
the screen, retitle the window), NUL bytes, ten thousand names in a 110 KB line, one name of a megabyte; and a
line break in a checkpoint's path split the verdict's line in two.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo" / "minisgl"
LONG = "a" * 300  # one path component: past every common file system's 255 bytes


def run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(cwd / "cache"), "HF_HUB_CACHE": str(cwd / "hub")}
    return subprocess.run([sys.executable, "-I", "-m", "spec_contract", *argv], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def assert_one_line_error(result: subprocess.CompletedProcess[str], *words: str) -> str:
    assert (result.returncode, result.stdout) == (2, ""), (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("spec-contract: error: "), result.stderr
    assert all(word in lines[0] for word in words), lines[0]
    return lines[0]


def checkpoint(folder: Path, config: object | str) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    return folder


def preflight(cwd: Path, model: Path | str, *more: str) -> subprocess.CompletedProcess[str]:
    return run(cwd, "preflight", "--engine", str(DEMO), "--model", str(model), "--algorithm", "EAGLE", *more)


DEEP = "[" * 2000 + "]" * 2000


def test_a_config_json_nested_too_deeply_is_one_line(tmp_path):
    deep = checkpoint(tmp_path / "deep", '{"architectures": ["LlavaForConditionalGeneration"], "x": ' + DEEP + "}")
    assert_one_line_error(preflight(tmp_path, deep), "config.json: not valid JSON (nested too deeply)")


def test_a_speculative_config_nested_too_deeply_is_one_line(tmp_path):
    target = checkpoint(tmp_path / "target", {"architectures": ["LlavaForConditionalGeneration"]})
    result = run(tmp_path, "preflight", "--engine", str(DEMO), "--", "vllm", "serve", str(target),
                 "--speculative-config", '{"method": "eagle", "x": ' + DEEP + "}")
    assert_one_line_error(result, "--speculative-config is not JSON (nested too deeply)")


@pytest.mark.parametrize(("argv", "words"), [
    (("preflight", "--engine", str(DEMO), "--model", f"/tmp/{LONG}", "--algorithm", "EAGLE"), ("File name too long",)),
    (("preflight", "--engine", str(DEMO), "--model", f"org/{LONG}", "--algorithm", "EAGLE"), ("File name too long",)),
    (("preflight", "--engine", str(DEMO), "--model", "~nosuchuser/ckpt", "--algorithm", "EAGLE"),
     ("cannot expand ~nosuchuser", "no user 'nosuchuser'")),
    (("preflight", "--engine", f"/tmp/{LONG}", "--model", "x", "--algorithm", "EAGLE"),
     ("--engine /tmp/aaa", "File name too long")),
    (("preflight", "--engine", "~nosuchuser/engine", "--model", "x", "--algorithm", "EAGLE"),
     ("--engine ~nosuchuser/engine: cannot expand ~nosuchuser",)),
    (("matrix", "--engine", f"/tmp/{LONG}"), ("--engine /tmp/aaa", "File name too long")),
    (("matrix", "--engine", "~nosuchuser/engine"), ("cannot expand ~nosuchuser",)),
    (("matrix", "--python", "~nosuchuser/bin/python"), ("--python ~nosuchuser/bin/python: cannot expand",)),
    (("check", "--config", f"/tmp/{LONG}", str(DEMO)), ("--config /tmp/aaa", "File name too long")),
    (("check", "--config", "~nosuchuser/spec.toml", str(DEMO)), ("--config ~nosuchuser/spec.toml: cannot expand",)),
], ids=["model-long", "hub-id-long", "model-no-user", "engine-long", "engine-no-user", "matrix-engine-long",
        "matrix-engine-no-user", "python-no-user", "config-long", "config-no-user"])
def test_a_path_that_cannot_name_a_file_is_one_line(tmp_path, argv, words):
    (tmp_path / "hub").mkdir()  # a hub id is looked up there: its folder's name is too long too
    (tmp_path / "org").mkdir()  # `org/<long>` is a path first: past `org`, the long name is what fails
    assert_one_line_error(run(tmp_path, *argv), *words)


def test_escape_sequences_and_nul_in_an_architecture_are_shown_escaped(tmp_path):
    hostile = checkpoint(tmp_path / "hostile", {"architectures": ["\x1b]0;owned\x07\x1b[2JEvil\x00ForCausalLM"]})
    line = assert_one_line_error(preflight(tmp_path, hostile), "which the engine does not register")
    assert "\x1b" not in line and "\x00" not in line and "\x07" not in line
    assert "\\x1b]0;owned\\x07\\x1b[2JEvil\\x00ForCausalLM" in line


def test_ten_thousand_unknown_architectures_make_a_short_line(tmp_path):
    many = checkpoint(tmp_path / "many", {"architectures": [f"Unknown{i}ForCausalLM" for i in range(10_000)]})
    line = assert_one_line_error(preflight(tmp_path, many), "Unknown0ForCausalLM, Unknown1ForCausalLM, "
                                 "Unknown2ForCausalLM and 9,997 more, which the engine does not register")
    assert len(line) < 500


def test_a_megabyte_architecture_name_makes_a_short_line(tmp_path):
    huge = checkpoint(tmp_path / "huge", {"architectures": ["A" * 1_000_000]})
    line = assert_one_line_error(preflight(tmp_path, huge), "which the engine does not register")
    assert len(line) < 500


def test_a_line_break_in_the_checkpoint_path_stays_on_the_verdict_line(tmp_path):
    split = checkpoint(tmp_path / "two\nlines", {"architectures": ["LlavaForConditionalGeneration"]})
    result = preflight(tmp_path, split)
    assert result.returncode == 1, result.stderr  # the demo's wrapper crashes
    (verdict,) = [line for line in result.stdout.splitlines() if line.startswith("target: ")]
    assert verdict.endswith("two\\x0alines/config.json): crashes"), result.stdout
    assert not [line for line in result.stdout.splitlines() if line.startswith("lines/")], result.stdout
