"""The pre-commit hooks of ``.pre-commit-hooks.yaml``, run by the real ``pre-commit`` from PyPI.

A scratch git repository laid out like an SGLang checkout (``python/sglang/srt/…``) uses this repository as
its hook repository (a snapshot of the working tree, committed, so uncommitted work is what is tested).
Committing a wrapper that forgets a forward fails and names it; the fix hook adds the forward; the commit
then passes. pre-commit builds the hook's environment with pip, as it does for every user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = ("tests/", "protocol-fixtures/", "vscode-client/", "benchmarks/", "examples/", "editors/")

FILES = {
    "python/pyproject.toml": "[project]\nname = 'sglang'\n",
    "python/sglang/__init__.py": "",
    "python/sglang/srt/__init__.py": "",
    "python/sglang/srt/speculative/eagle_worker.py": """
        class EAGLEWorker:
            def __init__(self, target_worker, draft_model_runner):
                embed, head = target_worker.model_runner.model.get_embed_and_head()
                draft_model_runner.model.set_embed_and_head(embed, head)
    """,
    "python/sglang/srt/models/llama.py": """
        class LlamaForCausalLM:
            def get_embed_and_head(self):
                return None, None

            def set_embed_and_head(self, embed, head):
                pass


        EntryClass = LlamaForCausalLM
    """,
}
KIMI = """
    from sglang.srt.models.llama import LlamaForCausalLM


    class KimiK25ForConditionalGeneration:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM()

        def set_embed_and_head(self, embed, head):
            return self.language_model.set_embed_and_head(embed, head)


    EntryClass = KimiK25ForConditionalGeneration
"""


def pre_commit() -> str:
    found = shutil.which("pre-commit")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("pre-commit is not installed (.ci/run installs it from PyPI)")
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    return found


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**(env or os.environ), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def copy_working_tree(target: Path, skipped: tuple[str, ...] = SKIPPED_DIRS) -> None:
    """This repository's working tree (tracked and new files, as git sees them) copied to ``target``, but for
    the folders ``skipped`` (what installing the package does without)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        source = REPO / rel
        if rel.startswith(skipped) or not source.is_file():
            continue
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / rel)


def snapshot(target: Path) -> str:
    """This repository's working tree (tracked and new files, as git sees them), committed in ``target``."""
    copy_working_tree(target)
    git(target, "init", "-q")
    git(target, "add", "-A")
    assert git(target, "commit", "-q", "-m", "snapshot").returncode == 0
    return git(target, "rev-parse", "HEAD").stdout.strip()


def test_the_hook_fails_on_a_forgotten_forward_and_the_fix_hook_repairs_it(tmp_path):
    command = pre_commit()
    hooks = tmp_path / "hooks"
    rev = snapshot(hooks)
    checkout = tmp_path / "checkout"
    for rel, text in FILES.items():
        (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
        (checkout / rel).write_text(textwrap.dedent(text).lstrip("\n"))
    (checkout / ".pre-commit-config.yaml").write_text(textwrap.dedent(f"""
        repos:
          - repo: {hooks}
            rev: {rev}
            hooks:
              - id: spec-contract
              - id: spec-contract-fix
                stages: [manual]
    """))
    git(checkout, "init", "-q")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "cache")}
    installed = subprocess.run([command, "install"], cwd=checkout, env=env, capture_output=True, text=True, timeout=60)
    assert installed.returncode == 0, installed.stderr
    git(checkout, "add", "-A")
    assert git(checkout, "commit", "-q", "-m", "the engine", env=env).returncode == 0  # no model wrapper yet

    kimi = checkout / "python/sglang/srt/models/kimi_k25.py"
    kimi.write_text(textwrap.dedent(KIMI).lstrip("\n"))
    git(checkout, "add", "-A")
    refused = git(checkout, "commit", "-m", "Kimi K2.5", env=env)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert ("python/sglang/srt/models/kimi_k25.py:4:7: error SC001 `KimiK25ForConditionalGeneration` does not forward "
            "`get_embed_and_head`") in output

    fixed = subprocess.run([command, "run", "--hook-stage", "manual", "spec-contract-fix", "--files", str(kimi)],
                           cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    assert "files were modified by this hook" in fixed.stdout, fixed.stdout + fixed.stderr
    assert "return self.language_model.get_embed_and_head()" in kimi.read_text()
    git(checkout, "add", "-A")
    accepted = git(checkout, "commit", "-m", "Kimi K2.5", env=env)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
