"""The package's shape stays as issue 15 left it: no import circles (function-local imports count), the front
ends (CLI, reports, language server) reach the engine only through its front door, and no class grows past
250 lines. Read from the source with ``ast``; nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "spec_contract"
FRONT_ENDS = ("spec_contract.cli", "spec_contract.report", "spec_contract.lsp")
MAX_CLASS_LINES = 250


def _modules() -> dict[str, tuple[Path, ast.Module]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = (path, ast.parse(path.read_text(encoding="utf-8")))
    return out


def _imports(name: str, path: Path, tree: ast.Module, known: set[str]) -> set[str]:
    """The package's modules ``name`` imports, anywhere in its body (``from pkg import module`` included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found |= {m for m in (module, *(f"{module}.{a.name}" for a in node.names)) if m in known}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in known}
    return found - {name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, tree, set(modules)) for name, (path, tree) in modules.items()}


def test_no_module_imports_itself_through_others():
    graph = _graph()
    cycles = []
    for start in graph:  # a depth-first walk from each module back to itself
        stack, seen = [(start, (start,))], set()
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    cycles.append(" -> ".join((*trail, start)))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, (*trail, nxt)))
    assert cycles == []


def test_front_ends_use_only_the_engines_front_door():
    through_the_side = sorted(f"{name} imports {imported}" for name, imports in _graph().items()
                              if name.startswith(FRONT_ENDS) for imported in imports
                              if imported.startswith("spec_contract.engine."))
    assert through_the_side == []


def test_no_class_is_longer_than_the_limit():
    long = sorted(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
                  for name, (_, tree) in _modules().items() for node in ast.walk(tree)
                  if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES)
    assert long == []
