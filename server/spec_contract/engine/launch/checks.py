"""Start-up checks the engine makes from config files alone, each tied to the engine line it mirrors.

A member check needs the classes; these need only the two ``config.json`` files and the environment. Each
check names the engine source it mirrors and is run only when that source is found in the release at hand
(read as text and parsed, never imported): a check whose line is not there is skipped with a note, never
guessed, since a release that moved or dropped the refusal may behave otherwise.

SGLang's draft context check (``ModelConfig._derive_context_length``): the draft runs with the target's
context length; when that is longer than the draft's own derived length (``get_context_length`` of its text
config: the first of ``CONTEXT_LENGTH_KEYS`` times a rope-scaling factor), start-up raises ``ValueError``
unless ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN`` is set. The draft's ``ModelConfig`` is built with the
draft's worker, inside the speculative worker's ``__init__``: after the target's worker has loaded its weights
and started its model runner, before the draft's weights load. This was the second of the three failed
Kimi-K2.5 launches (after the target's model runner asked for ``set_eagle3_layers_to_capture``, before the
EAGLE worker asked it for ``get_embed_and_head``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_contract.engine.launch.checkpoint import Checkpoint
from spec_contract.engine.read.files import read_text
from spec_contract.engine.text import split_lines

_ALLOW = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"
_TRUE = ("1", "true", "yes", "on", "y", "t")  # what SGLang's ``EnvBool`` reads as set


@dataclass(frozen=True)
class EngineLine:
    """A line of the engine's source: path relative to the engine's root, 1-based line, its text."""

    path: str
    line: int
    text: str


@dataclass(frozen=True)
class LaunchProblem:
    """A start-up refusal a launch check found: what the engine will say, where, and how to get past it."""

    check: str
    message: str
    where: EngineLine
    fix: str
    when: str = "while the server starts"  # when the engine raises it, in words


@dataclass(frozen=True)
class LaunchChecks:
    """What the launch checks found, and the notes of those skipped (their engine line was not found)."""

    problems: tuple[LaunchProblem, ...] = ()
    notes: tuple[str, ...] = ()


def run_launch_checks(engine: str, root: Path, target: Checkpoint, draft: Checkpoint | None,
                      context_length: int | None, env: dict[str, str]) -> LaunchChecks:
    """The launch checks of ``engine`` (only SGLang's draft context check so far) on the engine at ``root``."""
    if engine != "sglang" or draft is None:
        return LaunchChecks()
    return _draft_context(root, target, draft, context_length, env)


def _draft_context(root: Path, target: Checkpoint, draft: Checkpoint, context_length: int | None,
                   env: dict[str, str]) -> LaunchChecks:
    name = "draft-context-length"
    refusal = _find_raise(root, ("srt/configs/model_config.py", "**/configs/model_config.py"), _ALLOW)
    keys = _context_keys(root)
    if refusal is None or keys is None:
        missing = "the refusal naming " + _ALLOW if refusal is None else "CONTEXT_LENGTH_KEYS"
        return LaunchChecks(notes=(f"{name} check skipped: {missing} is not in this release's source",))
    if env.get(_ALLOW, "").strip().lower() in _TRUE:
        return LaunchChecks()
    wanted = context_length if context_length is not None else derived_context_length(target.text_config, keys)
    own = derived_context_length(draft.text_config, keys)
    if wanted <= own:
        return LaunchChecks()
    message = (f"the draft's context length ({own}, from {draft.path}) is shorter than the target's ({wanted}): "
               f"start-up raises ValueError")
    fix = f"set {_ALLOW}=1 in the server's environment, or pass --context-length {own}"
    when = "while the draft's worker starts, before the draft's weights load"
    return LaunchChecks((LaunchProblem(name, message, refusal, fix, when),))


def derived_context_length(config: dict[str, Any], keys: tuple[str, ...]) -> int:
    """SGLang's ``get_context_length``: the first context key's value, times the rope-scaling factor unless
    the scaling keeps an original length or is llama3's; 2048 when no key is set."""
    rope = config.get("rope_scaling")
    factor: Any = 1
    if isinstance(rope, dict) and rope:
        factor = rope.get("factor", 1)
        if "original_max_position_embeddings" in rope or rope.get("rope_type") == "llama3":
            factor = 1
    for key in keys:
        value = config.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return int(float(factor) * value)
            except (TypeError, ValueError):
                return int(value)
    return 2048


def _sources(root: Path, globs: tuple[str, ...]) -> Iterator[Path]:
    seen: set[Path] = set()
    for glob in globs:
        for path in sorted(root.glob(glob)):
            if path not in seen and path.is_file():
                seen.add(path)
                yield path


def _parse(path: Path) -> tuple[str, ast.Module] | None:
    try:
        text = read_text(path)
        return text, ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _find_raise(root: Path, globs: tuple[str, ...], word: str) -> EngineLine | None:
    """The first ``raise`` whose expression mentions ``word``, in the first file of ``globs`` that has one."""
    for path in _sources(root, globs):
        parsed = _parse(path)
        if parsed is None or word not in parsed[0]:
            continue
        text, tree = parsed
        lines = split_lines(text)  # numbered as the parser numbers ``lineno``
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None and word in (ast.get_source_segment(text, node) or ""):
                return EngineLine(path.relative_to(root).as_posix(), node.lineno, lines[node.lineno - 1].strip())
    return None


def _context_keys(root: Path) -> tuple[str, ...] | None:
    """``CONTEXT_LENGTH_KEYS``, the config keys ``get_context_length`` reads, from the engine's utilities."""
    for path in _sources(root, ("srt/utils/*.py", "srt/utils/**/*.py")):
        parsed = _parse(path)
        if parsed is None or "CONTEXT_LENGTH_KEYS" not in parsed[0]:
            continue
        for stmt in parsed[1].body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CONTEXT_LENGTH_KEYS"
                                                    for t in stmt.targets):
                try:
                    value = ast.literal_eval(stmt.value)
                except ValueError:
                    return None
                if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                    return tuple(value)
    return None
