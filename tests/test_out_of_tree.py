"""An out-of-tree model package takes its contract from the engine installed in another interpreter.

The fake engine is the bundled demo renamed to ``sglang`` and copied into a fresh virtual environment's
site-packages; the engine is read as source there, never imported (its files would fail to import: the
test plants a module that raises on import to prove it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo" / "minisgl"

WRAPPER = '''\
from sglang.models.llama import LlamaForCausalLM


class MyVLM:
    def __init__(self, config):
        self.language_model = LlamaForCausalLM(config)

    def get_embed_and_head(self):
        return self.language_model.get_embed_and_head()


EntryClass = [MyVLM]
'''


@pytest.fixture(scope="module")
def engine_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("engine-env")
    venv.create(root / "venv", with_pip=False)
    python = root / "venv" / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    engine = Path(site) / "sglang"
    shutil.copytree(DEMO, engine)
    for path in engine.rglob("*.py"):
        path.write_text(path.read_text().replace("minisgl", "sglang"))
    (engine / "__init__.py").write_text("raise RuntimeError('the engine must never be imported')\n")
    return str(python)


def _check(package: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spec_contract", "check", str(package), "--no-cache", *extra],
                          capture_output=True, text=True, timeout=120)


def test_contract_and_inner_classes_come_from_the_installed_engine(tmp_path: Path, engine_python: str) -> None:
    package = tmp_path / "mypkg"
    (package / "mymodels").mkdir(parents=True)
    (package / "mymodels" / "__init__.py").write_text("")
    (package / "mymodels" / "wrap.py").write_text(WRAPPER)

    result = _check(package, "--python", engine_python, "--format", "json")

    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    found = {(f["class"], f["method"], f["inner_class"]) for f in report["findings"]}
    assert found == {("MyVLM", "set_eagle3_layers_to_capture", "LlamaForCausalLM"),
                     ("MyVLM", "set_embed_and_head", "LlamaForCausalLM")}
    sites = {(s["path"], s["line"]) for f in report["findings"] for s in f["call_sites"]}
    assert ("sglang/model_executor/model_runner.py", 14) in sites
    assert {e["method"] for e in report["contract"]} >= {"get_embed_and_head", "set_embed_and_head"}


def test_without_an_installed_engine_the_check_says_so(tmp_path: Path) -> None:
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "wrap.py").write_text(WRAPPER)

    result = _check(package, "--python", sys.executable)

    assert result.returncode == 2
    assert "no installed 'sglang' package was found" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_bad_interpreter_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "wrap.py").write_text(WRAPPER)

    result = _check(tmp_path, "--python", str(tmp_path / "no-such-python"))

    assert result.returncode == 2
    assert "not a usable Python interpreter" in result.stderr
