"""A launch command read as data: which engine, which target and draft checkpoints, which algorithm.

People start from the line they are about to run (``python -m sglang.launch_server --model-path … ``,
``vllm serve MODEL --speculative-config '{"method": "eagle3", …}'``), not from a class. The line is split
as a shell would (:mod:`shlex`) and only the options that decide the speculative contract are read; every
other option is left alone, so a long real command line works as it is. ``VAR=value`` words before the
program are the environment the engine will see (``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 python …``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spec_contract.engine.config import ConfigError


class LaunchError(ConfigError):
    """A launch line (or its flags) that does not say what to check; one line, as every configuration error."""


def json_value(text: str, what: str) -> Any:
    """The JSON value of ``text`` (an option of the launch line, a checkpoint's ``config.json``), or a one-line
    LaunchError, ``what (why)``: JSON nested deeper than the parser recurses (2,000 ``[``) is as unusable as
    a syntax error, not a crash (a crash would exit 1, which a preflight means as "this launch will fail")."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise LaunchError(f"{what} ({exc})") from None
    except RecursionError:
        raise LaunchError(f"{what} (nested too deeply)") from None


@dataclass(frozen=True)
class Launch:
    """What one launch asks of the engine: the profile (``sglang``, ``vllm``), the checkpoints as given (a
    directory or a hub id), the algorithm as the engine spells it, an explicit context length, and the
    environment words of the line (merged over the caller's own environment by :meth:`environment`)."""

    engine: str
    model: str
    algorithm: str | None
    draft: str | None = None
    context_length: int | None = None
    env: dict[str, str] = field(default_factory=dict)

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        return {**(os.environ if base is None else base), **self.env}


_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

# program words → engine: ``python -m sglang.launch_server``, ``sglang serve``, ``vllm serve``,
# ``python -m vllm.entrypoints.openai.api_server``
_MODULES = {"sglang.launch_server": "sglang", "sglang.launch_server_http": "sglang",
            "vllm.entrypoints.openai.api_server": "vllm", "vllm.entrypoints.api_server": "vllm"}

# option → (field, engine); both spellings with ``-`` and ``_`` are accepted, as the engines' parsers do
_SGLANG = {"--model-path": "model", "--model": "model", "--speculative-algorithm": "algorithm",
           "--speculative-draft-model-path": "draft", "--speculative-draft-model": "draft",
           "--speculative-draft": "draft", "--context-length": "context_length"}
_VLLM = {"--model": "model", "--speculative-config": "speculative_config", "--max-model-len": "context_length"}


def parse_launch(words: Sequence[str]) -> Launch:
    """The launch a command line (one string, or words as the shell split them) asks for."""
    if len(words) == 1 and " " in words[0].strip():
        try:
            words = shlex.split(words[0])
        except ValueError as exc:
            raise LaunchError(f"cannot parse the launch line: {exc}") from None
    words = [w for w in words if w != "\\"]
    env: dict[str, str] = {}
    while words and _ENV_WORD.match(words[0]):
        name, _, value = words[0].partition("=")
        env[name] = value
        words = words[1:]
    if words[:1] == ["env"]:
        return parse_launch(words[1:])
    engine, rest = _program(list(words))
    options = _options(rest, _SGLANG if engine == "sglang" else _VLLM)
    model = options.pop("model", None) or options.pop("positional", None)
    if engine == "vllm":
        return _vllm(model, options, env)
    if model is None:
        raise LaunchError("the launch line names no model: pass --model-path DIR (or a hub id in the cache)")
    return Launch("sglang", model, options.get("algorithm"), options.get("draft"),
                  _int(options.get("context_length"), "--context-length"), env)


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The engine the line runs and the words after its program."""
    if not words:
        raise LaunchError("empty launch line: pass the command after `--`, e.g. "
                          "`-- python -m sglang.launch_server --model-path DIR …`")
    first = os.path.basename(words[0])
    if re.fullmatch(r"python[0-9.]*", first):
        if len(words) > 2 and words[1] == "-m" and words[2] in _MODULES:
            return _MODULES[words[2]], words[3:]
        shown = " ".join(words[:3])
        raise LaunchError(f"cannot parse the launch line: `{shown}` runs none of {', '.join(sorted(_MODULES))}")
    if first in ("sglang", "vllm") and words[1:2] == ["serve"]:
        return first, words[2:]
    raise LaunchError(f"cannot parse the launch line: `{words[0]}` is not `python -m sglang.launch_server`, "
                      "`sglang serve`, `vllm serve` or `python -m vllm.entrypoints.openai.api_server`")


def _options(words: list[str], known: dict[str, str]) -> dict[str, str]:
    """The known options' values (``--opt value`` and ``--opt=value``; ``_`` as ``-``), and the first
    positional word (``vllm serve MODEL``) as ``positional``."""
    out: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        key = known.get(name.replace("_", "-")) if name.startswith("--") else None
        if key is not None:
            if not eq:
                if i + 1 >= len(words) or words[i + 1].startswith("--"):
                    raise LaunchError(f"cannot parse the launch line: {name} has no value")
                value = words[i + 1]
                i += 1
            out[key] = value
        elif not word.startswith("-") and "positional" not in out and (i == 0 or not words[i - 1].startswith("-")):
            out["positional"] = word
        i += 1
    return out


def _vllm(model: str | None, options: dict[str, str], env: dict[str, str]) -> Launch:
    if model is None:
        raise LaunchError("the launch line names no model: `vllm serve MODEL` (a directory, or a hub id in the cache)")
    spec: dict[str, object] = {}
    raw = options.get("speculative_config")
    if raw is not None:
        spec = json_value(raw, "cannot parse the launch line: --speculative-config is not JSON")
        if not isinstance(spec, dict):
            raise LaunchError("cannot parse the launch line: --speculative-config must be a JSON object")
    method, draft = spec.get("method"), spec.get("model")
    if method is not None and not isinstance(method, str) or draft is not None and not isinstance(draft, str):
        raise LaunchError("cannot parse the launch line: --speculative-config's method and model must be strings")
    return Launch("vllm", model, method, draft, _int(options.get("context_length"), "--max-model-len"), env)


def _int(value: str | None, option: str) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise LaunchError(f"cannot parse the launch line: {option} {value!r} is not a whole number") from None
