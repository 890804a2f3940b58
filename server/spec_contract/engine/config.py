"""The profile and user settings that steer one analysis, merged from their sources.

Precedence, lowest first: the built-in profile (TOML shipped in ``spec_contract/profiles``), the checked
tree's ``[tool.spec-contract]`` table (or a ``--config`` file), then overrides from the CLI or the editor.
List keys may be replaced (``workers = [...]``) or extended (``extend-workers = [...]``). Every problem is a
:class:`ConfigError` with a one-line message; nothing here guesses.
"""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from spec_contract.engine.rules import DEFAULT_SEVERITY, known_codes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

SEVERITIES = ("error", "warning", "information", "hint")
DEFAULT_EXCLUDE = (
    "**/.git/**", "**/.venv/**", "**/venv/**", "**/node_modules/**", "**/__pycache__/**", "**/.tox/**",
    "**/build/**", "**/dist/**",
)


class ConfigError(ValueError):
    """A profile or setting that cannot be used; the message is one line naming the problem."""


@dataclass(frozen=True)
class ReceiverPattern:
    """An expression shape that denotes a role's model object (see the profile's ``[[receivers]]``)."""

    segments: tuple[str, ...]  # "*" first when any prefix is allowed; "[]" subscript, "()" call
    role: str
    classes: tuple[str, ...] = ()
    speculative: bool = False

    def matches(self, chain: tuple[str, ...], class_name: str | None) -> bool:
        """Whether ``chain``, used in a method of ``class_name``, denotes this pattern's model object.

        A leading ``*`` matches any prefix, the empty one too (``target_worker.model_runner.model`` on a
        parameter named ``target_worker``). A pattern limited to classes matches ``self`` only inside them;
        a ``self`` chain that flowed out of such a class arrives as ``self@Class``.
        """
        if self.segments[0] == "*":
            tail = self.segments[1:]
            return len(chain) >= len(tail) and chain[len(chain) - len(tail):] == tail
        if self.classes and chain and chain[0].startswith("self@"):
            return chain[0][5:] in self.classes and chain[1:] == self.segments[1:]
        if self.classes and class_name not in self.classes:
            return False
        return chain == self.segments


@dataclass(frozen=True)
class Config:
    """Everything that steers one analysis of one tree."""

    profile: str
    engine_package: str  # the import package of the engine, looked up for out-of-tree model packages
    workers: tuple[str, ...]
    model_files: tuple[str, ...]
    entry_class_variable: str | None
    delegate_names: tuple[str, ...]
    speculative_conditions: frozenset[str]
    ignored_members: frozenset[str]
    draft_only_classes: tuple[str, ...]
    registry_candidates: tuple[str, ...]  # dotted classes an inner chosen through the model registry may be
    receivers: tuple[ReceiverPattern, ...]
    severity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SEVERITY))
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    enable: bool = True
    select: frozenset[str] = frozenset(DEFAULT_SEVERITY)

    def roles_for_class(self, name: str) -> tuple[str, ...]:
        if any(fnmatch.fnmatchcase(name, glob) for glob in self.draft_only_classes):
            return ("draft",)
        return ("target", "draft")


def parse_chain(text: str) -> tuple[str, ...]:
    """``*.draft_runner_list[*].model`` → ``("*", "draft_runner_list", "[]", "model")``."""
    segments: list[str] = []
    for part in text.split("."):
        name = part.replace("[*]", "").replace("()", "")
        if not name or not (name == "*" or name.isidentifier()):
            raise ConfigError(f"receiver pattern {text!r}: {part!r} is not a name, '*', 'name[*]' or 'name()'")
        segments.append(name)
        rest = part[len(name):]
        while rest:
            if rest.startswith("[*]"):
                segments.append("[]")
                rest = rest[3:]
            elif rest.startswith("()"):
                segments.append("()")
                rest = rest[2:]
            else:  # pragma: no cover - guarded by the replace() above
                raise ConfigError(f"receiver pattern {text!r}: cannot read {part!r}")
    if "*" in segments[1:]:
        raise ConfigError(f"receiver pattern {text!r}: '*' may only stand first")
    return tuple(segments)


def available_profiles() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files("spec_contract.profiles").iterdir() if p.name.endswith(".toml"))


def _builtin_profile(name: str) -> dict[str, Any]:
    if name not in available_profiles():
        raise ConfigError(f"unknown profile {name!r} (available: {', '.join(available_profiles())})")
    text = resources.files("spec_contract.profiles").joinpath(f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _normalise_keys(table: dict[str, Any]) -> dict[str, Any]:
    """Accept snake_case, kebab-case and camelCase keys alike (pyproject, CLI and LSP settings)."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        snake = "".join("_" + c.lower() if c.isupper() else c for c in key).replace("-", "_")
        out[snake] = value
    return out


_LIST_KEYS = ("workers", "model_files", "delegate_names", "speculative_conditions", "ignored_members",
              "draft_only_classes", "registry_candidates", "include", "exclude", "receivers")
_KNOWN_KEYS = set(_LIST_KEYS) | {f"extend_{k}" for k in _LIST_KEYS} | {
    "profile", "engine_package", "entry_class_variable", "severity", "enable", "select", "debounce", "trace", "interpreter",
    "server",
}


def _merge(base: dict[str, Any], layer: dict[str, Any], origin: str) -> dict[str, Any]:
    merged = dict(base)
    for key, value in _normalise_keys(layer).items():
        if key not in _KNOWN_KEYS:
            raise ConfigError(f"{origin}: unknown setting {key!r}")
        if key.startswith("extend_"):
            target = key[len("extend_"):]
            if not isinstance(value, list):
                raise ConfigError(f"{origin}: {key!r} must be a list")
            merged[target] = list(merged.get(target, [])) + value
        elif key == "severity":
            if not isinstance(value, dict):
                raise ConfigError(f"{origin}: 'severity' must be a table of code = severity")
            merged["severity"] = {**merged.get("severity", {}), **value}
        else:
            merged[key] = value
    return merged


def _pyproject_table(root: Path) -> tuple[dict[str, Any], str] | None:
    candidate = root / "pyproject.toml"
    if not candidate.is_file():
        return None
    table = _read_toml(candidate).get("tool", {}).get("spec-contract")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{candidate}: [tool.spec-contract] must be a table")
    return table, str(candidate)


def load_config(root: Path, config_file: Path | None = None, overrides: dict[str, Any] | None = None) -> Config:
    """The configuration for the tree at ``root``; see the module docstring for precedence."""
    layers: list[tuple[dict[str, Any], str]] = []
    if config_file is not None:
        data = _read_toml(config_file)
        table = data.get("tool", {}).get("spec-contract", data)
        layers.append((table, str(config_file)))
    else:
        found = _pyproject_table(root) if root.is_dir() else None
        if found:
            layers.append(found)
    if overrides:
        layers.append(({k: v for k, v in overrides.items() if v is not None}, "settings"))

    profile_name = "sglang"
    for table, _ in layers:
        profile_name = _normalise_keys(table).get("profile", profile_name)
    if not isinstance(profile_name, str):
        raise ConfigError("'profile' must be a string")
    merged: dict[str, Any] = _normalise_keys(_builtin_profile(profile_name))
    merged["severity"] = dict(DEFAULT_SEVERITY)
    for table, origin in layers:
        merged = _merge(merged, table, origin)
    return _build(profile_name, merged)


def _strings(merged: dict[str, Any], key: str) -> tuple[str, ...]:
    value = merged.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{key.replace('_', '-')!r} must be a list of strings")
    return tuple(value)


def _build(profile_name: str, merged: dict[str, Any]) -> Config:
    receivers = []
    for raw in merged.get("receivers", []):
        if not isinstance(raw, dict) or "pattern" not in raw or "role" not in raw:
            raise ConfigError("each receiver needs a 'pattern' and a 'role'")
        if raw["role"] not in ("target", "draft"):
            raise ConfigError(f"receiver {raw['pattern']!r}: role must be 'target' or 'draft', not {raw['role']!r}")
        receivers.append(ReceiverPattern(parse_chain(raw["pattern"]), raw["role"], tuple(raw.get("classes", ())),
                                         bool(raw.get("speculative", False))))
    severity = merged.get("severity", {})
    for code, level in severity.items():
        if code not in DEFAULT_SEVERITY:
            raise ConfigError(f"unknown diagnostic code {code!r} in 'severity' (known: {known_codes()})")
        if level not in SEVERITIES:
            raise ConfigError(f"severity of {code} must be one of {', '.join(SEVERITIES)}, not {level!r}")
    select = merged.get("select", list(DEFAULT_SEVERITY))
    if isinstance(select, str):
        select = [s.strip() for s in select.split(",") if s.strip()]
    unknown = [code for code in select if code not in DEFAULT_SEVERITY]
    if unknown:
        raise ConfigError(f"unknown diagnostic code {unknown[0]!r} in 'select' (known: {known_codes()})")
    enable = merged.get("enable", True)
    if not isinstance(enable, bool):
        raise ConfigError("'enable' must be true or false")
    entry = merged.get("entry_class_variable")
    return Config(
        profile=profile_name,
        engine_package=str(merged.get("engine_package") or profile_name),
        workers=_strings(merged, "workers"),
        model_files=_strings(merged, "model_files"),
        entry_class_variable=entry or None,
        delegate_names=_strings(merged, "delegate_names"),
        speculative_conditions=frozenset(_strings(merged, "speculative_conditions")),
        ignored_members=frozenset(_strings(merged, "ignored_members")),
        draft_only_classes=_strings(merged, "draft_only_classes"),
        registry_candidates=_strings(merged, "registry_candidates"),
        receivers=tuple(receivers),
        severity={**DEFAULT_SEVERITY, **severity},
        include=_strings(merged, "include"),
        exclude=tuple(dict.fromkeys(DEFAULT_EXCLUDE + _strings(merged, "exclude"))),
        enable=enable,
        select=frozenset(select),
    )


def with_select(config: Config, codes: list[str]) -> Config:
    """``--select`` narrows the reported codes."""
    unknown = [c for c in codes if c not in DEFAULT_SEVERITY]
    if unknown:
        raise ConfigError(f"unknown diagnostic code {unknown[0]!r} in --select (known: {known_codes()})")
    return replace(config, select=frozenset(codes))
