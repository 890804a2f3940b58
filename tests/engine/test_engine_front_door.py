"""The engine's front door (``spec_contract.engine``) names what the front ends use, and stays cheap to import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import spec_contract.engine as engine

FRONT_DOOR = Path(engine.__file__)


def test_every_exported_name_loads_from_its_module() -> None:
    for name in engine.__all__:
        assert getattr(engine, name) is not None, name


def test_type_checkers_see_the_names_the_runtime_exports() -> None:
    """The imports under TYPE_CHECKING and the lazy table say the same thing."""
    tree = ast.parse(FRONT_DOOR.read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    seen = {}
    for node in guarded.body:
        assert isinstance(node, ast.ImportFrom) and node.module is not None
        for alias in node.names:
            seen[alias.asname or alias.name] = (node.module.removeprefix("spec_contract.engine."), alias.name)
    assert seen == engine._EXPORTS


def test_importing_the_front_door_loads_no_engine_module() -> None:
    code = ("import sys, spec_contract.engine; "
            "print(sorted(m for m in sys.modules if m.startswith('spec_contract.engine.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unknown_names_are_attribute_errors() -> None:
    try:
        engine.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_all_lists_every_export() -> None:
    assert sorted(engine.__all__) == sorted(engine._EXPORTS)
