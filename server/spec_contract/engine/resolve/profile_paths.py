"""Every dotted class the profile names, looked up in the tree: one that names nothing there is a
configuration error, never a check that quietly finds nothing.

A capability whose Protocol is not found checks no class: it would turn a fork (whose package is not the
profile's, or whose classes moved) into an all-clear. So when the tree holds the engine package, each such
path must resolve to a class; a tree without it
(a package of models checked against an installed engine it could not find, a fixture) has nothing to read
them in, and says so elsewhere.
"""

from __future__ import annotations

from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import Index


def unresolved(config: Config, index: Index) -> str | None:
    """The first profile path that names no class of the tree, as a one-line message; None when each
    resolves, or when the tree does not hold the engine package. Each capability's Protocol and mixin must
    resolve. The registry candidates (the classes a registry-chosen inner model may be) are read in the
    engine package too, but need not all be there: the list grows with the releases, and a missing one only
    offers one candidate fewer."""
    if index.summary(index.engine_module(config.engine_package)) is None:
        return None

    def found(dotted: str) -> bool:
        module, _, name = dotted.rpartition(".")
        return bool(module) and index.resolve_class(index.engine_module(module), (name,)) is not None

    named = [(c.protocol, f"capability {c.name}'s protocol") for c in config.capabilities]
    named += [(c.holder_mixin, f"capability {c.name}'s holder-mixin") for c in config.capabilities if c.holder_mixin]
    for dotted, what in named:
        if not found(dotted):
            return (f"the {what} {dotted!r} names no class in this tree (engine package "
                    f"{config.engine_package!r}, profile {config.profile!r}); set 'capabilities' in "
                    "[tool.spec-contract] to the class the engine has")
    return None
