"""README's set-up commands, as a new user types them (issue 37, item 2).

Debian's and Ubuntu's own ``python3`` is externally managed (PEP 668): ``pip install`` into it is refused with
``externally-managed-environment``. README's first command must work there as written, so this runs it,
word for word, in a copy of the working tree with Debian's ``/usr/bin/python3`` first on ``PATH`` and
nothing of this test run's environment (no virtual environment, no ``PYTHONPATH``) leaking in.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from test_precommit import copy_working_tree

REPO = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = Path("/usr/bin/python3")
# what installing the package and checking the demo do without (examples/ holds the demo)
SKIPPED = ("tests/", "protocol-fixtures/", "vscode-client/", "benchmarks/", "editors/")


def setup_commands() -> list[str]:
    """The shell blocks of README's "The two set-up commands" section, one command each."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## The two set-up commands\n", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S)]


def test_readme_has_two_set_up_commands_each_one_line():
    commands = setup_commands()
    assert len(commands) == 2, commands
    assert all("\n" not in command for command in commands), commands
    assert commands[1] == "bash .ci/run"


def _system_python() -> Path:
    """Debian's own interpreter, able to make a virtual environment (Debian's ``python3-venv``)."""
    why = None
    if not SYSTEM_PYTHON.is_file():
        why = f"{SYSTEM_PYTHON} is not installed"
    elif subprocess.run([str(SYSTEM_PYTHON), "-c", "import ensurepip, venv"], capture_output=True).returncode:
        why = f"{SYSTEM_PYTHON} cannot make a virtual environment (apt-get install python3-venv; .ci/run does)"
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return SYSTEM_PYTHON


def test_the_first_command_works_as_written_with_debians_own_python(tmp_path):
    python = _system_python()
    checkout = tmp_path / "spec-contract"
    copy_working_tree(checkout, SKIPPED)
    bin_dir = tmp_path / "bin"  # `python3` is Debian's, whatever interpreter runs this test
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(python)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "VIRTUAL_ENV", "CONDA", "PIP_REQUIRE", "SPEC_CONTRACT_"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", HOME=str(tmp_path),
               SPEC_CONTRACT_CACHE_DIR=str(tmp_path / "cache"))
    first = setup_commands()[0]
    result = subprocess.run(["bash", "-c", first], cwd=checkout, env=env, capture_output=True, text=True,
                            timeout=900)
    output = result.stdout + result.stderr
    # the demo's wrapper forgets two forwards: exit 1 with two SC001 findings (README says so)
    assert result.returncode == 1, output
    assert len(re.findall(r"^\S+:\d+:\d+: error SC001 ", result.stdout, flags=re.M)) == 2, output
    assert "externally-managed-environment" not in output
