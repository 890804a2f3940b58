"""Architecture names → the registered classes the engine builds for them, as ``check`` resolves them.

SGLang registers a model file's classes in its ``EntryClass`` and builds the class whose ``__name__`` is
the checkpoint's architecture, so an architecture is the name of a checked class. vLLM maps names to
``("module", "Class")`` in its registry's dicts (read by :func:`~spec_contract.engine.resolve.registry.build_registry`,
as the analysis reads them): several names may build one class.
"""

from __future__ import annotations

import difflib

from spec_contract.engine.launch.command import LaunchError
from spec_contract.engine.queries import Analysis
from spec_contract.engine.read.files import glob_match
from spec_contract.engine.resolve.index import ClassKey
from spec_contract.engine.resolve.registry import build_registry


def architectures(analysis: Analysis, unchecked: dict[str, str] | None = None) -> dict[str, ClassKey]:
    """Every architecture name the engine registers, with its checked class, in name order; a checked class
    no name reaches (the version classes a registered dispatcher builds, vLLM's ``MiniCPMV2_6``) is listed
    under its own name. ``unchecked`` receives the names whose registered class is not checked itself."""
    checked = {key.dotted: key for key in analysis.checked}
    by_name: dict[str, ClassKey] = {}
    for key in analysis.checked:
        by_name.setdefault(key.qualname, key)
    config = analysis.config
    files = [f for f in analysis.models if config.registry_files and glob_match(f.rel, config.registry_files)]
    if not files:
        return dict(sorted(by_name.items()))
    texts = [(f.module, analysis.source(f.path) or "") for f in files]
    registry = build_registry(texts, config.registry_tables, config.engine_package, "")
    out: dict[str, ClassKey] = {}
    for arch, (module, name) in registry.architectures.items():
        if (module, name) not in registry.registered:
            continue
        found = checked.get(f"{analysis.index.engine_module(module)}.{name}") or checked.get(f"{module}.{name}") \
            or next((k for k in analysis.checked if k.qualname == name
                     and (module.endswith(k.module) or k.module.endswith(module) or k.module.startswith(module + "."))),
                    None)  # the last: a package that picks its class per platform (``vllm.models.qwen4_exp``)
        if found is not None:
            out[arch] = found
        elif unchecked is not None:
            unchecked[arch] = f"{module}.{name}"
    reached = set(out.values())
    for key in analysis.checked:
        if key in reached:
            continue
        name = key.qualname
        other = out.get(name)
        if other is not None:  # another platform's class of a per-platform package: named by its platform
            name = f"{name} ({_differing(key.module, other.module)})"
        out.setdefault(name, key)
    return dict(sorted(out.items()))


def _differing(module: str, other: str) -> str:
    """The first segment of ``module`` that ``other`` does not share (``amd`` of ``….qwen4_exp.amd.model``)."""
    mine, theirs = module.split("."), other.split(".")
    return next((a for a, b in zip(mine, theirs) if a != b), module)


def class_for(known: dict[str, ClassKey], architectures_named: tuple[str, ...], where: str,
              unchecked: dict[str, str] | None = None) -> tuple[str, ClassKey]:
    """The first named architecture the engine registers (the engine takes the first it knows, too)."""
    for arch in architectures_named:
        if arch in known:
            return arch, known[arch]
        if unchecked and arch in unchecked:
            raise LaunchError(f"{where}: names {arch}, whose registered class {unchecked[arch]} builds another "
                              "class at run time (a dispatcher): cannot tell which; pass the checkpoint of the class "
                              "it builds, or run `spec-contract matrix` to see each")
    named = _some(architectures_named)
    close = difflib.get_close_matches(architectures_named[0], list(known), n=3)
    hint = f" (close: {', '.join(close)})" if close else ""
    raise LaunchError(f"{where}: names {named}, which the engine does not register{hint}")


_SOME_NAMES, _NAME_WIDTH = 3, 80


def _some(names: tuple[str, ...]) -> str:
    """The first few of ``names``, each cut to a line's width, and how many more: the names come from a
    third-party ``config.json``, which may list ten thousand architectures, or one a megabyte long."""
    shown = [n if len(n) <= _NAME_WIDTH else n[:_NAME_WIDTH - 1] + "…" for n in names[:_SOME_NAMES]]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more:,} more" if more else "")
