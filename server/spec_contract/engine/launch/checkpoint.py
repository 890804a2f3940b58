"""A checkpoint's ``config.json``, from a directory or from the Hugging Face cache, never from the network.

The engine decides the model class from ``architectures`` and the context length from the text config
before it loads a single weight, so that file is all a preflight needs. A hub id (``moonshotai/Kimi-K2.5``)
is looked up where ``huggingface_hub`` keeps its cache (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``~/.cache/huggingface/hub``): ``models--org--name/refs/<revision>`` names the snapshot whose
``config.json`` is read. A checkpoint that is not there is an error that says what to pass instead.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_contract.engine.launch.command import LaunchError, json_value
from spec_contract.engine.read.files import read_text
from spec_contract.engine.read.given import given_path

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class Checkpoint:
    """What a checkpoint's config says, as given (``name``) and where it was read (``path``)."""

    name: str
    path: str
    architectures: tuple[str, ...]
    config: dict[str, Any]

    @property
    def text_config(self) -> dict[str, Any]:
        """The language model's part of a multimodal config (``text_config``, ``llm_config``), else the whole."""
        for key in ("text_config", "llm_config", "language_config"):
            part = self.config.get(key)
            if isinstance(part, dict):
                return part
        return self.config


def hub_cache(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"])
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                                              "huggingface")
    return Path(home) / "hub"


def config_path(name: str, env: dict[str, str] | None = None, revision: str = "main") -> Path:
    """The ``config.json`` a model name stands for: in the directory it names, else in the hub cache."""
    given = given_path(name)
    if given.is_dir():
        return given / "config.json"
    if given.is_file() and given.name == "config.json":
        return given
    if not _HUB_ID.match(name) or name.startswith((".", "/", "~")):
        raise LaunchError(f"{name}: no such checkpoint directory")
    cache = hub_cache(env)
    repo = cache / ("models--" + name.replace("/", "--"))
    ref = repo / "refs" / revision
    try:  # the name makes the cache's folder name: one too long for the file system is found here
        snapshot = read_text(ref).strip() if ref.is_file() else revision
        found = repo / "snapshots" / snapshot / "config.json"
        cached = found.is_file()
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the ref's text
        raise LaunchError(f"{name}: cannot read {ref}: {getattr(exc, 'strerror', None) or exc}") from None
    if not cached:
        raise LaunchError(f"{name}: not a directory and not in the Hugging Face cache ({cache}); pass the "
                          f"checkpoint's directory, or download its config first "
                          f"(`huggingface-cli download {name} config.json`)")
    return found


def read_checkpoint(name: str, env: dict[str, str] | None = None) -> Checkpoint:
    """The checkpoint's config, with its architectures; a config that names none is an error."""
    path = config_path(name, env)
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise LaunchError(f"{name}: no config.json in {path.parent}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LaunchError(f"{path}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    config = json_value(text, f"{path}: not valid JSON")
    if not isinstance(config, dict):
        raise LaunchError(f"{path}: not a JSON object")
    architectures = config.get("architectures")
    if not isinstance(architectures, list) or not architectures or \
            not all(isinstance(a, str) and a for a in architectures):
        raise LaunchError(f"{path}: names no architecture (`\"architectures\": [\"…ForCausalLM\"]`)")
    return Checkpoint(name, str(path), tuple(architectures), config)
