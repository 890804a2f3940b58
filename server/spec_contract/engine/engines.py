"""Which engine a tree is: found by its layout, not by its package's name.

A fork keeps its engine's layout under its own package name (aphrodite-engine is vLLM's ``v1/spec_decode/``,
``model_executor/models/registry.py`` … under ``aphrodite``), so each built-in profile says which paths make
a package look like its engine (its TOML's ``[layout]``). The package found is the engine's import package:
every dotted class the profile names (``vllm.model_executor.models.interfaces.SupportsEagle3``) is read
against it (``aphrodite.model_executor.…``), and one that names nothing there is a configuration error
(see :func:`spec_contract.engine.resolve.profile_paths.unresolved`), never a check that silently finds
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spec_contract.engine.read.files import read_bytes


@dataclass(frozen=True)
class Layout:
    """What makes a package one engine's: paths under it that all exist (``v1/spec_decode`` …)."""

    profile: str
    engine: str  # the engine's name for messages ("vLLM")
    package: str  # the profile's own import package ("vllm")
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Detected:
    """The profile a tree gets when nothing names one, its engine package, and why (one line)."""

    profile: str
    package: str
    why: str


def detect(root: Path, layouts: list[Layout]) -> Detected | None:
    """The first layout that ``root`` (an installed package) or a package at its top (a checkout) has; by
    name only when no layout matches (a tree that is, or holds, the profile's own package)."""
    candidates = [root] if (root / "__init__.py").is_file() else []
    try:
        candidates += sorted(child for child in root.iterdir()
                             if child.is_dir() and (child / "__init__.py").is_file())
    except OSError:
        pass  # an unlistable root: only the root itself
    for layout in layouts:
        # the profile's own package first, so a checkout holding vllm/ and a vendored copy picks vllm/
        for package in sorted(candidates, key=lambda p: p.name != layout.package):
            if layout.paths and all((package / path).exists() for path in layout.paths):
                where = "the tree" if package == root else f"{package.name}/"
                return Detected(layout.profile, imported_as(package, layout),
                                f"{where} has {layout.engine}'s layout ({', '.join(layout.paths)})")
    for layout in layouts:
        if (root.name == layout.package and (root / "__init__.py").is_file()) \
                or (root / layout.package / "__init__.py").is_file():
            return Detected(layout.profile, layout.package, f"the tree holds the {layout.package!r} package")
    return None


def holds_package(root: Path, dotted: str) -> bool:
    """Whether the tree at ``root`` has the package (or module) ``dotted``: at its top (a checkout), or as
    ``root`` itself and below (an installed package, ``…/site-packages/vllm``)."""
    first, *rest = dotted.split(".")
    bases = [root / first] + ([root] if root.name == first else [])
    return any((target / "__init__.py").is_file() or target.with_name(target.name + ".py").is_file()
               for target in (base.joinpath(*rest) for base in bases))


def imported_as(package: Path, layout: Layout, most: int = 40) -> str:
    """The name the engine's own code imports it by: a copy of a release in a folder of another name
    (``sglang_v059/``) still imports ``sglang.…``, while a fork (``aphrodite/``) imports itself. Read from the
    absolute imports in the files under the layout's paths (at most ``most`` of them), the folder's name when
    they name neither."""
    if package.name == layout.package:
        return package.name
    counts = {package.name: 0, layout.package: 0}
    files = [f for path in layout.paths for f in sorted((package / path).glob("*.py"))][:most]
    for file in files:
        data = read_bytes(str(file), limit=65536)  # regular files only: a FIFO named *.py never blocks this
        if isinstance(data, str):
            continue
        for name in counts:
            counts[name] += data.count(f"from {name}.".encode()) + data.count(f"import {name}.".encode())
    return layout.package if counts[layout.package] > counts[package.name] else package.name


def rebased(dotted: str, own: str, package: str) -> str:
    """A dotted name the profile writes under its own package (``vllm.…``), read in the engine package the
    tree has (``aphrodite.…``); any other name as it is."""
    if package != own and (dotted == own or dotted.startswith(own + ".")):
        return package + dotted[len(own):]
    return dotted
