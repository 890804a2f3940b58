"""Editor settings (section ``specContract``): parsing, validation and merging.

Settings arrive from two places: ``initializationOptions`` (once, for every folder) and
``workspace/configuration`` (per folder, re-read on ``workspace/didChangeConfiguration``). The folder's value
wins key by key. A value of the wrong shape must not stop the server: it is reported once (the caller turns
the problems into a ``window/showMessage`` warning) and the default is used for that key alone.

Which keys exist, their kinds and their docs are the engine's one schema (``engine.config.SETTINGS``), and
every value is checked by its one ``validate``; this module only decides what a rejected value falls back
to. The result is split in two: what the language server itself uses (``enable``, ``debounce``) and the
``overrides`` dict handed to the engine's ``load_config``, which merges it over the tree's
``[tool.spec-contract]`` table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spec_contract.engine import BY_NAME, ConfigError, snake_key, validate

SECTION = "specContract"
DEFAULT_DEBOUNCE_MS = 150


@dataclass(frozen=True)
class Settings:
    """One folder's effective editor settings."""

    enable: bool = True
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    profile: str | None = None
    severity: Mapping[str, str] = field(default_factory=dict)
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    select: frozenset[str] | None = None

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
        if self.select is not None:
            result["select"] = sorted(self.select)
        return result


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
            key = snake_key(key)
            if key == "severity" and isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
                result[key] = {**result[key], **value}
            elif value is not None:
                result[key] = value
    return result


_FALLBACK = {"enable": "using true", "debounce": f"using {DEFAULT_DEBOUNCE_MS}", "profile": "using the default",
             "select": "reporting every code"}
_FIELD = {"debounce": "debounce_ms"}


def parse(raw: Mapping[str, Any]) -> tuple[Settings, list[str]]:
    """Validate merged raw settings; return the settings to use and one sentence per rejected value."""
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key, value in merge(raw).items():
        setting = BY_NAME.get(key)
        if setting is None or setting.where == "tree":
            where = " (it is read from pyproject.toml only)" if setting is not None else ""
            problems.append(f"{SECTION}.{key} is not a known setting{where}; ignoring it")
            continue
        if setting.where == "client":
            continue
        if key == "severity":
            values["severity"] = _severity(value, problems)
            continue
        if key in ("include", "exclude") and isinstance(value, str):
            value = [value]
        if key == "profile" and isinstance(value, str):
            value = value.strip() or None
        try:
            checked = validate(key, value)
        except ConfigError as exc:
            problems.append(f"{SECTION}.{key}: {exc}; {_FALLBACK.get(key, 'ignoring it')}")
            continue
        if key in ("include", "exclude") and not checked:
            continue  # an empty list (VS Code's default) leaves the pyproject's globs alone
        values[_FIELD.get(key, key)] = checked
    return Settings(**values), problems


def _severity(value: Any, problems: list[str]) -> dict[str, str]:
    """Each code's level on its own: one bad entry falls back alone."""
    if not isinstance(value, Mapping):
        problems.append(f"{SECTION}.severity must map codes to severities, got {value!r}; using the defaults")
        return {}
    result: dict[str, str] = {}
    for code, level in value.items():
        try:
            result.update(validate("severity", {code: level}))
        except ConfigError as exc:
            problems.append(f"{SECTION}.severity.{code}: {exc}; using the default")
    return result
