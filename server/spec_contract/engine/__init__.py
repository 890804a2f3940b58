"""The engine's front door: everything the CLI, the reports and the language server use, by name.

Front ends import from here (``from spec_contract.engine import Project, load_config``), never from the
engine's modules, so the modules behind the door can be split and moved without touching them.

The names are loaded lazily, on first use: ``import spec_contract.engine`` imports nothing else. The
language server imports this package at start-up (through its settings) and must start as fast as a bare
pygls server; it loads the analysis on its own thread when it first needs it (``lsp.server.load_engine``).
The imports under ``TYPE_CHECKING`` say the same as ``_EXPORTS`` for type checkers; a test keeps the two
equal.

Submodules stay reachable the ordinary way (``from spec_contract.engine import baseline``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spec_contract.engine.check.baseline import Baseline, fingerprint
    from spec_contract.engine.check.baseline import Entry as BaselineEntry
    from spec_contract.engine.check.baseline import load as load_baseline
    from spec_contract.engine.check.baseline import write as write_baseline
    from spec_contract.engine.check.protocols import GatedCapability
    from spec_contract.engine.check.status import (
        AlgorithmState,
        AlgorithmStatus,
        ClassStatus,
        Crash,
        How,
        MemberStatus,
        Provision,
        class_status,
        serving_roles,
    )
    from spec_contract.engine.config import (
        BY_NAME,
        Config,
        ConfigError,
        detect_profile,
        load_config,
        snake_key,
        validate,
        with_select,
    )
    from spec_contract.engine.edits.fix import declaration_edits, declined, delegation_edits, suppression_edit
    from spec_contract.engine.edits.refusals import Added, Fixes, Refusal
    from spec_contract.engine.edits.stubs import StubError
    from spec_contract.engine.launch.command import Launch, LaunchError, parse_launch
    from spec_contract.engine.launch.matrix import Matrix, Row, support_matrix
    from spec_contract.engine.launch.preflight import Engine, Failure, Preflight, analyse_engine, find_engine, preflight
    from spec_contract.engine.launch.verdict import (
        PHASES,
        Problem,
        Use,
        Verdict,
        crash_stands,
        loaded_words,
        phase_words,
        says_a_crash,
    )
    from spec_contract.engine.launch.verdict import State as VerdictState
    from spec_contract.engine.project import Project
    from spec_contract.engine.queries import Analysis, in_files
    from spec_contract.engine.read.discovery import RULE as DISCOVERY_RULE
    from spec_contract.engine.read.discovery import Found, find_project, is_project, nested_projects
    from spec_contract.engine.read.files import SourceFile, decode, read_bytes, relative_to
    from spec_contract.engine.read.given import given_path
    from spec_contract.engine.read.listing import Listings
    from spec_contract.engine.resolve.roles import RoleClass, role_classes
    from spec_contract.engine.results import (
        CallSite,
        Contract,
        ContractEntry,
        Finding,
        Phase,
        Provider,
        Role,
        Span,
        TextEdit,
    )
    from spec_contract.engine.rules import BY_CODE, IMPLEMENTABLE, MISSING_CAPABILITY, RULES, Fix, Rule, Severity
    from spec_contract.engine.stats import Stats
    from spec_contract.engine.text import LineIndex, apply_edits, lines_with_ends, only_adds_lines
    from spec_contract.engine.written import write_own

# exported name → (module under this package, the name there)
_EXPORTS: dict[str, tuple[str, str]] = {
    "Baseline": ("check.baseline", "Baseline"),
    "fingerprint": ("check.baseline", "fingerprint"),
    "BaselineEntry": ("check.baseline", "Entry"),
    "load_baseline": ("check.baseline", "load"),
    "write_baseline": ("check.baseline", "write"),
    "BY_NAME": ("config", "BY_NAME"),
    "Config": ("config", "Config"),
    "ConfigError": ("config", "ConfigError"),
    "load_config": ("config", "load_config"),
    "detect_profile": ("config", "detect_profile"),
    "snake_key": ("config", "snake_key"),
    "validate": ("config", "validate"),
    "with_select": ("config", "with_select"),
    "DISCOVERY_RULE": ("read.discovery", "RULE"),
    "Found": ("read.discovery", "Found"),
    "find_project": ("read.discovery", "find_project"),
    "nested_projects": ("read.discovery", "nested_projects"),
    "is_project": ("read.discovery", "is_project"),
    "SourceFile": ("read.files", "SourceFile"),
    "decode": ("read.files", "decode"),
    "read_bytes": ("read.files", "read_bytes"),
    "relative_to": ("read.files", "relative_to"),
    "given_path": ("read.given", "given_path"),
    "Listings": ("read.listing", "Listings"),
    "RoleClass": ("resolve.roles", "RoleClass"),
    "role_classes": ("resolve.roles", "role_classes"),
    "Refusal": ("edits.refusals", "Refusal"),
    "Fixes": ("edits.refusals", "Fixes"),
    "Added": ("edits.refusals", "Added"),
    "declined": ("edits.fix", "declined"),
    "declaration_edits": ("edits.fix", "declaration_edits"),
    "delegation_edits": ("edits.fix", "delegation_edits"),
    "suppression_edit": ("edits.fix", "suppression_edit"),
    "Project": ("project", "Project"),
    "Stats": ("stats", "Stats"),
    "Analysis": ("queries", "Analysis"),
    "in_files": ("queries", "in_files"),
    "AlgorithmStatus": ("check.status", "AlgorithmStatus"),
    "ClassStatus": ("check.status", "ClassStatus"),
    "MemberStatus": ("check.status", "MemberStatus"),
    "AlgorithmState": ("check.status", "AlgorithmState"),
    "Crash": ("check.status", "Crash"),
    "How": ("check.status", "How"),
    "Provision": ("check.status", "Provision"),
    "class_status": ("check.status", "class_status"),
    "serving_roles": ("check.status", "serving_roles"),
    "Phase": ("results", "Phase"),
    "CallSite": ("results", "CallSite"),
    "Contract": ("results", "Contract"),
    "ContractEntry": ("results", "ContractEntry"),
    "Finding": ("results", "Finding"),
    "GatedCapability": ("check.protocols", "GatedCapability"),
    "Provider": ("results", "Provider"),
    "Role": ("results", "Role"),
    "Span": ("results", "Span"),
    "TextEdit": ("results", "TextEdit"),
    "BY_CODE": ("rules", "BY_CODE"),
    "MISSING_CAPABILITY": ("rules", "MISSING_CAPABILITY"),
    "IMPLEMENTABLE": ("rules", "IMPLEMENTABLE"),
    "RULES": ("rules", "RULES"),
    "Rule": ("rules", "Rule"),
    "Fix": ("rules", "Fix"),
    "Severity": ("rules", "Severity"),
    "StubError": ("edits.stubs", "StubError"),
    "Launch": ("launch.command", "Launch"),
    "LaunchError": ("launch.command", "LaunchError"),
    "parse_launch": ("launch.command", "parse_launch"),
    "Matrix": ("launch.matrix", "Matrix"),
    "Row": ("launch.matrix", "Row"),
    "support_matrix": ("launch.matrix", "support_matrix"),
    "Engine": ("launch.preflight", "Engine"),
    "Failure": ("launch.preflight", "Failure"),
    "Preflight": ("launch.preflight", "Preflight"),
    "analyse_engine": ("launch.preflight", "analyse_engine"),
    "find_engine": ("launch.preflight", "find_engine"),
    "preflight": ("launch.preflight", "preflight"),
    "PHASES": ("launch.verdict", "PHASES"),
    "phase_words": ("launch.verdict", "phase_words"),
    "loaded_words": ("launch.verdict", "loaded_words"),
    "says_a_crash": ("launch.verdict", "says_a_crash"),
    "crash_stands": ("launch.verdict", "crash_stands"),
    "Problem": ("launch.verdict", "Problem"),
    "Use": ("launch.verdict", "Use"),
    "Verdict": ("launch.verdict", "Verdict"),
    "VerdictState": ("launch.verdict", "State"),
    "LineIndex": ("text", "LineIndex"),
    "apply_edits": ("text", "apply_edits"),
    "lines_with_ends": ("text", "lines_with_ends"),
    "only_adds_lines": ("text", "only_adds_lines"),
    "write_own": ("written", "write_own"),
}

__all__ = [
    "AlgorithmState", "Crash", "How", "Phase", "Provision", "class_status", "serving_roles",
    "Added", "AlgorithmStatus", "Analysis", "BY_CODE", "BY_NAME", "Baseline", "BaselineEntry", "CallSite", "ClassStatus",
    "Config", "ConfigError", "Contract", "ContractEntry", "DISCOVERY_RULE", "Finding", "Fix", "Fixes", "GatedCapability", "Found", "IMPLEMENTABLE", "LineIndex",
    "Listings",
    "MISSING_CAPABILITY", "MemberStatus", "Project", "Provider", "RULES", "Refusal", "Role", "Rule", "Severity", "SourceFile", "Span",
    "Stats", "StubError", "TextEdit", "apply_edits", "declaration_edits", "declined", "decode", "delegation_edits",
    "detect_profile", "find_project", "fingerprint", "is_project", "nested_projects", "lines_with_ends", "load_baseline", "load_config", "only_adds_lines",
    "given_path", "in_files", "read_bytes", "relative_to", "snake_key", "suppression_edit", "validate", "with_select", "write_baseline",
    "write_own",
    "RoleClass", "role_classes",
    # before the launch (engine/launch/)
    "Engine", "Failure", "Launch", "LaunchError", "Matrix", "PHASES", "Preflight", "Problem", "Row", "Use", "Verdict",
    "VerdictState", "analyse_engine", "find_engine", "parse_launch", "phase_words", "preflight", "says_a_crash",
    "crash_stands", "loaded_words", "support_matrix",
]


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use (PEP 562), then keep it here."""
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{where[0]}"), where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
