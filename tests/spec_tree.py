"""A small SGLang-shaped project for the reliability tests (issue 24): one worker, one inner model, wrappers.

The worker calls three members on the target and draft models, one of them guarded (``hasattr``), so a
wrapper that forgets its forwards has findings of two codes (SC001 and SC002); ``write_tree`` lays out any
mix of wrappers and extra files, and ``check`` (or any command, ``spec_contract``) runs the command as CI does,
with a cache of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

WORKER = """\
class EAGLEWorker:
    def __init__(self, target_worker, draft_model_runner):
        embed, head = target_worker.model_runner.model.get_embed_and_head()
        draft_model_runner.model.set_embed_and_head(embed, head)
        model = target_worker.model_runner.model
        if hasattr(model, "set_eagle3_layers_to_capture"):
            model.set_eagle3_layers_to_capture([1])
"""
LLAMA = """\
class LlamaForCausalLM:
    def get_embed_and_head(self):
        return None, None

    def set_embed_and_head(self, embed, head):
        pass

    def set_eagle3_layers_to_capture(self, layers):
        pass


EntryClass = LlamaForCausalLM
"""
MEMBERS = ("get_embed_and_head", "set_embed_and_head", "set_eagle3_layers_to_capture")


def wrapper(name: str, *forwards: str, inner: str = "LlamaForCausalLM",
            inner_module: str = "sglang.srt.models.llama") -> str:
    """A wrapper class holding ``inner`` in ``self.language_model`` and forwarding only ``forwards``."""
    body = "".join(f"\n    def {m}(self, *args):\n        return self.language_model.{m}(*args)\n" for m in forwards)
    return (f"from {inner_module} import {inner}\n\n\nclass {name}:\n    def __init__(self, config):\n"
            f"        self.language_model = {inner}()\n{body}\n\nEntryClass = {name}\n")


def write_tree(root: Path, files: dict[str, str] | None = None, package: str = "sglang") -> Path:
    """``root/<package>`` with the worker, the inner model and ``files`` (relative to the package)."""
    base = root / package
    layout = {"__init__.py": "", "srt/__init__.py": "", "srt/speculative/eagle_worker.py": WORKER,
              "srt/models/llama.py": LLAMA, **(files or {})}
    for rel, text in layout.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    return base


def spec_contract(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``spec-contract ARGS`` in ``cwd``, isolated as the editors start it, with a cache of its own."""
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(cwd.parent / f"{cwd.name}-cache")}
    return subprocess.run([sys.executable, "-I", "-m", "spec_contract", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=timeout)


def check(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``spec-contract check ARGS`` in ``cwd`` (see :func:`spec_contract`)."""
    return spec_contract(cwd, "check", *args, timeout=timeout)
