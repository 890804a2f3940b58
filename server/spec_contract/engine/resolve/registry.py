"""An engine's model registry read as data: vLLM's ``registry.py`` maps architecture names to
``("module", "Class")`` in module-level dicts, instead of a per-file ``EntryClass`` variable.

Two things come from it: which classes are the registered models (only they are checked as wrappers, so the
layers, encoders and towers of a model file never are), and what ``init_vllm_registered_model(...,
architectures=["Qwen2ForCausalLM"])`` builds (see :data:`spec_contract.engine.summarise.classes.ARCHITECTURE`). The
file is parsed, never imported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


def read_tables(text: str) -> dict[str, dict[str, tuple[str, str]]]:
    """The module-level dicts of ``text`` whose every value is a pair of strings: name → arch → (module,
    class). Dicts built by unpacking others (``{**_A, **_B}``) hold nothing here; their parts do."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Dict):
            continue
        table = {}
        for key, item in zip(value.keys, value.values):
            strings = [e.value for e in item.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)] \
                if isinstance(item, ast.Tuple) and len(item.elts) == 2 else []
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and len(strings) == 2:
                table[key.value] = (strings[0], strings[1])
        if table:
            tables[target.id] = table
    return tables


def module_of(relname: str, registry_module: str, engine_package: str) -> str:
    """The module a registry entry names: relative to the registry's package (``"qwen2"`` →
    ``vllm.model_executor.models.qwen2``) unless it is a dotted name inside the engine package."""
    if relname == engine_package or relname.startswith(engine_package + "."):
        return relname
    package = registry_module.rpartition(".")[0]
    return f"{package}.{relname}" if package else relname


@dataclass(frozen=True)
class ModelRegistry:
    """What the registry files say: every architecture's class, and the registered (checked) classes."""

    digest: str  # of the registry files' texts: results computed with another registry are stale
    architectures: dict[str, tuple[str, str]] = field(default_factory=dict)  # arch → (module, class name)
    registered: tuple[tuple[str, str], ...] = ()  # (module, class name) of the registered tables, in order
    modules: tuple[str, ...] = ()  # the registry files' modules
    # (module, class name) of the classes the draft tables register and no other registered table does: the
    # engine loads them only as draft models
    drafts: frozenset[tuple[str, str]] = frozenset()


def build_registry(files: list[tuple[str, str]], tables: tuple[str, ...], engine_package: str,
                   digest: str, draft_tables: tuple[str, ...] = ()) -> ModelRegistry:
    """The registry from ``files`` ((module, text) of each registry file); ``tables`` names the dicts whose
    classes are the registered models (the others still tell what an architecture name builds), and
    ``draft_tables`` those that register draft heads."""
    architectures: dict[str, tuple[str, str]] = {}
    registered: dict[tuple[str, str], None] = {}
    drafts: set[tuple[str, str]] = set()
    targets: set[tuple[str, str]] = set()
    for module, text in files:
        for name, table in read_tables(text).items():
            for arch, (relname, cls) in table.items():
                where = (module_of(relname, module, engine_package), cls)
                architectures.setdefault(arch, where)
                if name in tables:
                    registered[where] = None
                    (drafts if name in draft_tables else targets).add(where)
    return ModelRegistry(digest, architectures, tuple(registered), tuple(module for module, _ in files),
                         frozenset(drafts - targets))
