"""Input that cannot be used is one line and exit 2 (issue 38, items 3 and 4).

A ``config.json`` or ``--speculative-config`` nested 2,000 levels deep ended in a ``RecursionError`` traceback and
exit 1, which ``preflight`` means as "this launch will fail". A path component over 255 bytes (``--model-path``,
``--engine``, ``--config``, a hub-id-shaped ``org/<long>``) and ``~nosuchuser/…`` were tracebacks too.
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
    (("check", "--config", f"/tmp/{LONG}", str(DEMO)), ("--config /tmp/aaa", "File name too long")),
    (("check", "--config", "~nosuchuser/spec.toml", str(DEMO)), ("--config ~nosuchuser/spec.toml: cannot expand",)),
], ids=["model-long", "hub-id-long", "model-no-user", "engine-long", "engine-no-user", "matrix-engine-long",
        "matrix-engine-no-user", "config-long", "config-no-user"])
def test_a_path_that_cannot_name_a_file_is_one_line(tmp_path, argv, words):
    (tmp_path / "hub").mkdir()  # a hub id is looked up there: its folder's name is too long too
    (tmp_path / "org").mkdir()  # `org/<long>` is a path first: past `org`, the long name is what fails
    assert_one_line_error(run(tmp_path, *argv), *words)
