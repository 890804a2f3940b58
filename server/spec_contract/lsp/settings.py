"""Editor settings (section ``specContract``): parsing, validation and merging.

Settings arrive from two places: ``initializationOptions`` (once, for every folder) and
``workspace/configuration`` (per folder, re-read on ``workspace/didChangeConfiguration``). The folder's value
wins key by key. A value of the wrong shape must not stop the server: it is reported once (the caller turns
the problems into a ``window/showMessage`` warning) and the default is used for that key alone.

The result is split in two: what the language server itself uses (``enable``, ``debounce``) and the
``overrides`` dict handed to the engine's ``load_config``, which merges it over the tree's
``[tool.spec-contract]`` table and validates what only the engine knows (e.g. which profiles exist).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spec_contract.engine.rules import CODES

SECTION = "specContract"
SEVERITIES = ("error", "warning", "information", "hint")
DEFAULT_DEBOUNCE_MS = 150
MAX_DEBOUNCE_MS = 10_000


@dataclass(frozen=True)
class Settings:
    """One folder's effective editor settings."""

    enable: bool = True
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    profile: str | None = None
    severity: Mapping[str, str] = field(default_factory=dict)
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None

    def overrides(self) -> dict[str, Any]:
        """The part the engine merges over pyproject; keys left unset keep the pyproject/profile value."""
        result: dict[str, Any] = {}
        if self.profile is not None:
            result["profile"] = self.profile
        if self.severity:
            result["severity"] = dict(self.severity)
        if self.include is not None:
            result["include"] = list(self.include)
        if self.exclude is not None:
            result["exclude"] = list(self.exclude)
        return result


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def section_of(options: Any) -> dict[str, Any]:
    """The ``specContract`` part of an options object; clients send either the section or the whole tree."""
    if not isinstance(options, Mapping):
        return {}
    inner = options.get(SECTION)
    if isinstance(inner, Mapping):
        return dict(inner)
    return dict(options)


def merge(*layers: Mapping[str, Any] | None) -> dict[str, Any]:
    """Later layers win key by key; ``severity`` maps are merged per code rather than replaced."""
    result: dict[str, Any] = {}
    for layer in layers:
        if not layer:
            continue
        for key, value in layer.items():
            key = _snake(key)
            if key == "severity" and isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
                result[key] = {**result[key], **value}
            elif value is not None:
                result[key] = value
    return result


def _globs(name: str, value: Any, problems: list[str]) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return tuple(value)
    problems.append(f"{SECTION}.{name} must be a list of glob strings, got {value!r}; ignoring it")
    return None


# Settings in the same section that the editor extension itself uses (which interpreter or command starts
# the server, protocol tracing): VS Code sends the whole section, so they arrive here and are not errors.
CLIENT_SIDE = frozenset({"interpreter", "server", "trace"})


def parse(raw: Mapping[str, Any]) -> tuple[Settings, list[str]]:
    """Validate merged raw settings; return the settings to use and one sentence per rejected value."""
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key, value in merge(raw).items():
        if key == "enable":
            if isinstance(value, bool):
                values["enable"] = value
            else:
                problems.append(f"{SECTION}.enable must be true or false, got {value!r}; using true")
        elif key == "debounce":
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= MAX_DEBOUNCE_MS:
                values["debounce_ms"] = int(value)
            else:
                problems.append(
                    f"{SECTION}.debounce must be a number of milliseconds between 0 and {MAX_DEBOUNCE_MS}, "
                    f"got {value!r}; using {DEFAULT_DEBOUNCE_MS}"
                )
        elif key == "profile":
            if isinstance(value, str) and value.strip():
                values["profile"] = value.strip()
            else:
                problems.append(f"{SECTION}.profile must be a profile name, got {value!r}; using the default")
        elif key == "severity":
            values["severity"] = _severity(value, problems)
        elif key in ("include", "exclude"):
            globs = _globs(key, value, problems)
            if globs:  # an empty list (VS Code's default) leaves the pyproject's globs alone
                values[key] = globs
        elif key not in CLIENT_SIDE:
            problems.append(f"{SECTION}.{key} is not a known setting; ignoring it")
    return Settings(**values), problems


def _severity(value: Any, problems: list[str]) -> dict[str, str]:
    if not isinstance(value, Mapping):
        problems.append(f"{SECTION}.severity must map codes to severities, got {value!r}; using the defaults")
        return {}
    result: dict[str, str] = {}
    for code, level in value.items():
        if code not in CODES:
            problems.append(f"{SECTION}.severity: unknown code {code!r} (known: {', '.join(CODES)}); ignoring it")
        elif not isinstance(level, str) or level.lower() not in SEVERITIES:
            problems.append(
                f"{SECTION}.severity.{code} must be one of {', '.join(SEVERITIES)}, got {level!r}; "
                "using the default"
            )
        else:
            result[code] = level.lower()
    return result
