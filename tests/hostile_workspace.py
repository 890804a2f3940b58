"""Marker modules that reveal workspace code being run: every editor and launch test plants them (issue 14, item 6).

Clients start the server with the project as the working directory, and ``python -m``/``-c`` look there first
for every module: a project holding one of these names would run it. Each module, if it ever runs, leaves a
file named after itself in a markers directory outside the workspace, and fails the import.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

# Modules the server, the interpreter's start-up or the processes the server starts import by name (runpy for
# `-m` on 3.10, importlib on 3.12, multiprocessing in the engine's fork server).
SHADOWS = (
    "spec_contract", "argparse", "typing", "runpy", "importlib", "multiprocessing", "selectors", "concurrent", "asyncio",
    "json", "logging", "threading", "uuid", "pathlib", "pygls", "lsprotocol", "cattrs", "attrs", "libcst",
    "tomllib", "tomli", "sitecustomize", "usercustomize",
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


def imported_before_main(python: str) -> set[str]:
    """The planted names a plain ``python -m`` imports from the working directory before the module it runs is
    loaded (a venv's frozen runpy imports ``importlib`` there; the system Python's ``site`` has imported it
    already): nothing the server does can keep those out, so a test of what happens *after* start-up removes
    them. Found by running a probe module among the markers until it runs, dropping each marker that fired."""
    fired: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        folder, markers = Path(tmp) / "cwd", Path(tmp) / "markers"
        folder.mkdir()
        plant_markers(folder, markers)
        (folder / "spec_contract.py").unlink()
        (folder / "probe_main.py").write_text("")
        for _ in SHADOWS:
            if subprocess.run([python, "-m", "probe_main"], cwd=folder, capture_output=True, timeout=60).returncode == 0:
                return fired
            new = set(ran(markers)) - fired
            assert new, "the probe failed and no marker fired"
            fired |= new
            for name in new:
                (folder / f"{name}.py").unlink()
    return fired
