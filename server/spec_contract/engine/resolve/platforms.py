"""Per-platform packages: a package that binds one class name from two of its subpackages (``if
current_platform.is_rocm(): from .amd.model import X`` … ``else: from .nvidia.model import X``, at import or
in its module ``__getattr__``) ships one implementation per platform, and each platform's classes run
together: an NVIDIA wrapper builds the NVIDIA language model, never the ROCm one.
"""

from __future__ import annotations

from spec_contract.engine.resolve.keys import ClassKey, ClassReader


def branch_of(reader: ClassReader, module: str) -> str | None:
    """The platform branch ``module`` sits in (``"nvidia"`` for ``….deepseek_v4.nvidia.vl_model``): the
    subpackage of the nearest enclosing package that binds a name from it and from another of its
    subpackages; None outside such a package."""
    parts = module.split(".")
    for depth in range(len(parts) - 2, 0, -1):
        summary = reader.summary(".".join(parts[:depth]))
        if summary is None or not summary.is_package:
            continue
        sources: dict[str, set[str]] = {}
        for binding in (*summary.imports, *(b for _, b in summary.local_imports)):
            if binding.level == 1 and binding.module:
                sources.setdefault(binding.name, set()).add(binding.module.split(".")[0])
        if any(parts[depth] in branches and len(branches) > 1 for branches in sources.values()):
            return parts[depth]
    return None


def same_branch(reader: ClassReader, choices: tuple[ClassKey, ...], module: str) -> tuple[ClassKey, ...]:
    """Of a per-platform package's ``choices`` for one name, those of the branch ``module`` (the class that
    builds one) sits in; all of them when it sits in none of theirs (a wrapper shared by the platforms)."""
    branch = branch_of(reader, module) if len(choices) > 1 else None
    kept = tuple(c for c in choices if branch_of(reader, c.module) == branch) if branch else ()
    return kept or choices
