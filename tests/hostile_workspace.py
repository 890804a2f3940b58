"""Marker modules that reveal workspace code being run: every editor and launch test plants them (issue 14, item 6).

Clients start the server with the project as the working directory, and ``python -m``/``-c`` look there first
for every module: a project holding one of these names would run it. Each module, if it ever runs, leaves a
file named after itself in a markers directory outside the workspace, and fails the import.
"""

from __future__ import annotations

from pathlib import Path

# Modules the server, the interpreter's start-up or the processes the server starts import by name (runpy for
# `-m` on 3.10, importlib on 3.12, multiprocessing in the engine's fork server, jedi's environment subprocess).
SHADOWS = (
    "spec_contract", "argparse", "typing", "runpy", "importlib", "multiprocessing", "selectors", "concurrent", "asyncio",
    "json", "logging", "threading", "uuid", "pathlib", "pygls", "lsprotocol", "cattrs", "attrs", "libcst", "jedi",
    "parso", "tomllib", "tomli", "sitecustomize", "usercustomize",
)


def plant_markers(workspace: Path, markers: Path) -> Path:
    """A module per name in SHADOWS at the root of ``workspace``; returns ``markers``."""
    markers.mkdir(parents=True, exist_ok=True)
    for name in SHADOWS:
        (workspace / f"{name}.py").write_text(
            f"open({str(markers / name)!r}, 'w').write('workspace code ran')\n"
            f"raise ImportError('the workspace module {name} was imported')\n"
        )
    return markers


def ran(markers: Path) -> list[str]:
    """The planted modules that ran (none, when all is well)."""
    return sorted(p.name for p in markers.iterdir()) if markers.is_dir() else []
