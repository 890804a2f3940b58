"""The environment given as ``--python`` (or ``$VIRTUAL_ENV``) is read, never run (issue 38, items 1 and 7).

The probe used to start that interpreter with its site module on, to ask for ``sys.path``: every ``import``
line of its ``.pth`` files and its ``sitecustomize`` ran, for ``check`` of an out-of-tree package, ``preflight``
and ``matrix`` (and the VS Code matrix command, which runs ``matrix --python``). Here the environment plants
both, each writing a marker when it runs; its engine is an editable install, on the path only through a
``.pth`` path line, so the engine is found only if that line is read. A ``--python`` that never answers (a
wrapper script waiting on something) made the same commands wait for ever.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo" / "minisgl"
WRAPPER = '''\
from sglang.models.llama import LlamaForCausalLM


class MyVLM:
    def __init__(self, config):
        self.language_model = LlamaForCausalLM(config)


EntryClass = [MyVLM]
'''
SAFETY = 120  # seconds: only so that a regression fails instead of hanging the suite; nothing is timed


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A virtual environment whose start-up code writes markers, with the demo engine installed editable."""
    root = tmp_path_factory.mktemp("planted")
    env, markers = root / "venv", root / "markers"
    markers.mkdir()
    venv.create(env, with_pip=False, symlinks=True)
    (site,) = env.glob("lib/python3*/site-packages")
    source = root / "src"
    shutil.copytree(DEMO, source / "sglang", ignore=shutil.ignore_patterns("__pycache__"))
    for path in (source / "sglang").rglob("*.py"):
        path.write_text(path.read_text().replace("minisgl", "sglang"))
    (source / "sglang" / "__init__.py").write_text(f"open({str(markers / 'engine')!r}, 'w')\n")
    (site / "__editable__.sglang.pth").write_text(
        f"{source}\nimport os; open({str(markers / 'pth')!r}, 'w').write('a .pth import line ran')\n")
    (site / "sitecustomize.py").write_text(f"open({str(markers / 'sitecustomize')!r}, 'w').write('ran')\n")
    return env, markers


def run(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    environ.update({"SPEC_CONTRACT_CACHE_DIR": str(cwd / "cache"), **(env or {})})
    return subprocess.run([sys.executable, "-I", "-m", "spec_contract", *argv], capture_output=True, text=True,
                          cwd=cwd, env=environ, timeout=SAFETY)


def models(tmp: Path) -> Path:
    package = tmp / "mine"
    (package / "mymodels").mkdir(parents=True)
    (package / "mymodels" / "__init__.py").write_text("")
    (package / "mymodels" / "wrap.py").write_text(WRAPPER)
    return package


def checkpoint(tmp: Path) -> Path:
    folder = tmp / "llava-checkpoint"
    folder.mkdir()
    (folder / "config.json").write_text('{"architectures": ["LlavaForConditionalGeneration"]}')
    return folder


def fired(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def test_check_of_an_out_of_tree_package_reads_the_environment_without_running_it(planted, tmp_path):
    env, markers = planted
    result = run(tmp_path, "check", str(models(tmp_path)), "--python", str(env / "bin" / "python"))
    assert result.returncode == 1 and "MyVLM" in result.stdout, result.stderr  # the engine was found
    assert fired(markers) == []


def test_preflight_and_matrix_read_the_environment_without_running_it(planted, tmp_path):
    env, markers = planted
    python = str(env / "bin" / "python")
    launch = ("--", "python", "-m", "sglang.launch_server", "--model-path", str(checkpoint(tmp_path)),
              "--speculative-algorithm", "EAGLE")
    preflight = run(tmp_path, "preflight", "--python", python, *launch)
    assert preflight.returncode == 1 and "get_embed_and_head" in preflight.stdout, preflight.stderr
    matrix = run(tmp_path, "matrix", "--python", python, "--format", "json")
    assert matrix.returncode == 0 and "LlavaForConditionalGeneration" in matrix.stdout, matrix.stderr
    assert fired(markers) == []


def test_the_active_virtual_environment_is_the_default_and_is_not_run_either(planted, tmp_path):
    env, markers = planted
    result = run(tmp_path, "check", str(models(tmp_path)), env={"VIRTUAL_ENV": str(env)})
    assert result.returncode == 1 and "MyVLM" in result.stdout, result.stderr
    assert fired(markers) == []


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")  # ended, not yet reaped by whoever inherited it


@pytest.mark.parametrize("command", ["check", "preflight", "matrix"])
def test_a_python_that_never_answers_is_given_up_on_with_one_line(tmp_path, command):
    if not Path("/proc/self/stat").exists():
        pytest.skip("reads /proc to see that the wrapper's children were stopped")
    sleeper = tmp_path / "sleeper.pid"
    python = tmp_path / "python-wrapper"
    python.write_text(f"#!/bin/sh\nsleep 100000 &\necho $! > {sleeper}\nwait\n")
    python.chmod(0o755)
    rest = {"check": (str(models(tmp_path)),),
            "preflight": ("--", "python", "-m", "sglang.launch_server", "--model-path", str(checkpoint(tmp_path)),
                          "--speculative-algorithm", "EAGLE"),
            "matrix": ()}[command]
    result = run(tmp_path, command, "--python", str(python), *rest)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.splitlines()) == 1 and "no answer within" in result.stderr, result.stderr
    assert f"ran `{python} -I -S -c" in result.stderr
    pid = int(sleeper.read_text())
    deadline = time.monotonic() + SAFETY
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(pid), "the wrapper's child was left running"


def fake_interpreter(path: Path) -> Path:
    """A file where an interpreter would be that cannot run (not a script, not a program): read, it tells
    the probe its prefix; run, it would fail."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF not really\n")
    path.chmod(0o755)
    return path


def installation(prefix: Path, version: str = "3.12") -> Path:
    """A conda-shaped prefix: bin/python -> python3.12, lib/python3.12/os.py, its own site-packages."""
    python = fake_interpreter(prefix / "bin" / f"python{version}")
    (prefix / "bin" / "python").symlink_to(python.name)
    (prefix / "lib" / f"python{version}" / "site-packages").mkdir(parents=True)
    (prefix / "lib" / f"python{version}" / "os.py").write_text("")
    return prefix / "bin" / "python"


def test_an_installation_and_a_venv_including_it_are_read_from_their_files_alone(tmp_path):
    from spec_contract.engine.read.environment import locate_engine

    base_python = installation(tmp_path / "conda")
    engine = tmp_path / "conda" / "lib" / "python3.12" / "site-packages" / "sglang"
    engine.mkdir()
    (engine / "__init__.py").write_text("")
    assert locate_engine(str(base_python), "sglang") == engine
    assert locate_engine(str(tmp_path / "conda"), "sglang") == engine  # the environment's folder will do
    for included, found in (("true", engine), ("false", None)):
        env = tmp_path / f"venv-{included}"
        (env / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
        (env / "bin").mkdir()
        (env / "bin" / "python").symlink_to(base_python.resolve())
        (env / "pyvenv.cfg").write_text(f"home = {base_python.parent}\ninclude-system-site-packages = {included}\n"
                                        "version = 3.12.4\n")
        assert locate_engine(str(env / "bin" / "python"), "sglang") == found
