"""What upstream's own code says, read with ``ast`` and never imported or executed: for the history miner
(``mine_history.py``), per release of an engine, each model file's top-level classes with their bases, their own
members and the attribute paths those members' bodies read and write, and a fingerprint of each class's source
lines (the miner tells a class that stayed from a new class under the same name by it).

An engine's :class:`Layout` says where it keeps its models and how its unpacked releases are named; nothing
else here differs between engines.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Facts = dict[str, Any]


@dataclass(frozen=True)
class Layout:
    """Where one engine keeps what the miner reads. ``engine`` is the package's name and the prefix of each
    unpacked release's folder (``REL/<engine>-<version>/<engine>``); ``models`` the folders under the package
    that hold model files (the tool's profile for the engine looks there too); ``releases`` the range mined
    by default (only releases the tool is developed on: later ones are held out for judging it)."""

    engine: str
    models: tuple[str, ...]
    releases: tuple[str, ...]

    def root(self, rel: Path, version: str) -> Path:
        return rel / f"{self.engine}-{version}" / self.engine


LAYOUTS = {
    "sglang": Layout("sglang", ("srt/models/",), tuple(f"0.5.{n}" for n in range(8, 17))),
    # vLLM's per-platform model packages sit in the package's own ``models/``
    "vllm": Layout("vllm", ("model_executor/models/", "models/"), ("0.25.1", *(f"0.{n}.0" for n in range(26, 33)))),
}


# --- what a member's body uses of the model -------------------------------------------------------------
def _self_chain(node: ast.AST) -> list[str] | None:
    """``["a", "b"]`` for ``self.a.b``; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return list(reversed(parts)) if parts and isinstance(node, ast.Name) and node.id == "self" else None


def _aliases(node: ast.AST) -> dict[str, tuple[list[str], int]]:
    """Locals assigned once, from a ``self.a.b`` chain (``text_config = self.config.text_config``): name →
    (the chain, the id of the assigned value), so their uses read as the chain they stand for."""
    stored: dict[str, int] = {}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            stored[sub.id] = stored.get(sub.id, 0) + 1
    out = {}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name) and \
                stored.get(sub.targets[0].id) == 1:
            chain = _self_chain(sub.value)
            if chain is not None:
                out[sub.targets[0].id] = (chain, id(sub.value))
    return out


def attr_paths(node: ast.AST) -> dict[str, list[str]]:
    """The maximal ``self.a.b`` chains a body reads and writes (``{"read": [...], "write": [...]}``). A local
    assigned once from a chain stands for that chain (``text_config = self.config.text_config`` then
    ``text_config.num_hidden_layers`` reads ``self.config.text_config.num_hidden_layers``), as the same path
    written through a local is the same path."""
    reads: set[str] = set()
    writes: set[str] = set()
    inner: set[int] = set()  # attributes that are part of a longer chain
    aliases = _aliases(node)
    used = {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)
            and sub.id in aliases}
    defining = {aliases[name][1] for name in used}  # an alias's own value: read where the alias is used
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, (ast.Attribute, ast.Name)):
            inner.add(id(sub.value))
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in aliases:
            if id(sub) not in inner:  # used alone (``return embed, embed``): it reads the chain itself
                reads.add(".".join(["self", *aliases[sub.id][0]]))
            continue
        if not isinstance(sub, ast.Attribute) or id(sub) in inner or id(sub) in defining:
            continue
        parts = [sub.attr]
        value = sub.value
        while isinstance(value, ast.Attribute):
            parts.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id == "self":
            base: list[str] = []
        elif isinstance(value, ast.Name) and value.id in aliases:
            base = aliases[value.id][0]
        else:
            continue
        path = ".".join(["self", *base, *reversed(parts)])
        (writes if isinstance(sub.ctx, (ast.Store, ast.Del)) else reads).add(path)
    return {"read": sorted(reads), "write": sorted(writes)}


def hands_over(member: str, paths: dict[str, list[str]]) -> bool:
    """Whether a body hands the member to an attribute: it reads ``self.<attr...>.<member>`` (a forward,
    possibly guarded, as ``if hasattr(self.language_model, m): return self.language_model.m()``)."""
    return any(path.endswith(f".{member}") and path.count(".") >= 2 for path in paths["read"])


def with_new_helpers(paths: dict[str, list[str]], members: dict[str, Facts], before: dict[str, Facts],
                     seen: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """The paths of a body with each call of a helper method added in the same change (``self._shard_weight(x)``,
    a method of the newer class the older class did not have) replaced by that helper's own paths.

    Such a helper is the fix's own code split in two, not a part of the model: the older class has no
    ``_shard_weight`` for a generated body to call, and what the fix reads and writes of the model is what the
    helper reads and writes. A method the older class already had is a part of the model and stays a read."""
    reads: set[str] = set()
    writes = set(paths["write"])
    for path in paths["read"]:
        name = path.split(".")[1] if path.count(".") == 1 else None
        if name is None or name not in members or name in before or name in seen:
            reads.add(path)
            continue
        expanded = with_new_helpers(members[name]["paths"], members, before, seen | {name})
        reads.update(expanded["read"])
        writes.update(expanded["write"])
    return {"read": sorted(reads), "write": sorted(writes)}


def class_members(tree: ast.Module) -> dict[str, dict[str, Facts]]:
    """Top-level classes → their own methods and properties → the attribute paths their bodies use."""
    out: dict[str, dict[str, Facts]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        members: dict[str, Facts] = {}
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                members[item.name] = {"paths": attr_paths(item)}
        out[node.name] = members
    return out




def _fingerprint(node: ast.ClassDef, lines: list[str]) -> list[str]:
    """The lines of the class's body, stripped, blank lines and comments left out, each hashed short: the
    share of them two releases' classes of one name have in common says whether they are one class. The
    ``class`` line is left out: it holds the bases, which are compared as such (a one-line class whose base
    was dropped is still the class)."""
    kept = {text.strip() for text in lines[node.body[0].lineno - 1:node.end_lineno]}
    return sorted({hashlib.blake2b(text.encode(), digest_size=4).hexdigest() for text in kept
                   if text and not text.startswith("#")})


def upstream_facts(root: Path, layout: Layout) -> Facts:
    """Per model file (path relative to ``root``): its classes' own members, their bases as written, the
    fingerprint of each class, and the names the module uses."""
    files: Facts = {}
    for folder in layout.models:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            data = path.read_bytes()
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError):
                continue
            lines = data.decode("utf-8", errors="replace").splitlines()
            classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
            names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
                           | {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                              for a in n.names})
            files[rel] = {"classes": class_members(tree), "names": names,
                          "bases": {node.name: [ast.unparse(b) for b in node.bases] for node in classes},
                          "fingerprint": {node.name: _fingerprint(node, lines) for node in classes}}
    return files
