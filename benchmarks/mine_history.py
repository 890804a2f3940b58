"""Upstream's own fixes as the acceptance test of issue 20: how many of them would the tool have named?

For each consecutive pair of releases (unpacked wheels in ``REL/sglang-V/sglang``), a *fix* is a member
(method or property) upstream added to a model class under ``srt/models/`` that already existed in the older
release, that the older class did not provide (own body, bases, ``__getattr__``), and that the older
release's derived contract already held: the older release had the bug. Each fix is one of

- ``forward``: the new body hands the member to an attribute (``return self.model.get_embed_and_head()``,
  possibly under a ``hasattr`` guard);
- ``implement``: a body of its own (``return self.model.embed_tokens.weight, self.lm_head.weight``);
- ``chain``: a forward whose inner class got the same member in the same release.

The tool *names* a fix when ``check --format json`` on the older release has a finding of any code or
severity on that class, or on a registered subclass of it, that names the member. For implement fixes the
miner also compares the body the tool generates (what ``check --fix`` writes on a scratch copy of the
release) with upstream's: the same attribute paths read and written (``self.model.embed_tokens``,
``self.lm_head``).

Everything is read, never imported or executed; upstream code is never copied anywhere but the cache.
Per release, the upstream facts and the tool's facts are cached in ``--cache`` (the tool's keyed by a hash of
this checkout's package, so an edited engine is measured again).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from check_runs import REPO, env_with_cache, run_check

MODELS = "srt/models/"
Facts = dict[str, Any]


# --- upstream: what each model class's own body defines --------------------------------------------------
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


def _body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return body


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


def upstream_facts(root: Path) -> Facts:
    """Per model file (path relative to ``root``): its classes' own members and the names the module uses."""
    files: Facts = {}
    for path in sorted((root / MODELS).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
                       | {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names})
        files[rel] = {"classes": class_members(tree), "names": names}
    return files


# --- the tool on one release -----------------------------------------------------------------------------
def miner_hash() -> str:
    """This script's own hash: what it extracts is part of every cached fact."""
    return hashlib.sha1(Path(__file__).read_bytes()).hexdigest()[:12]


def tool_hash() -> str:
    """This checkout's package and this script: a change to either measures the tool again."""
    digest = hashlib.sha1(miner_hash().encode())
    for path in sorted((REPO / "server" / "spec_contract").rglob("*")):
        if path.suffix in (".py", ".toml") and path.is_file():
            digest.update(path.relative_to(REPO).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _generated(root: Path, wanted: set[tuple[str, str]]) -> dict[str, dict[str, dict[str, Facts]]]:
    """What ``check --fix`` adds to the ``wanted`` (path, class) pairs: path → class → new member → attribute
    paths. Run as a user runs it, on a scratch copy of the release's ``.py`` files (the CLI is the fixed
    interface; whatever edits it writes, forwards or implementations, are what is measured)."""
    if not wanted:
        return {}
    with tempfile.TemporaryDirectory(prefix="mine-history-") as scratch:
        copy = Path(scratch) / root.name
        shutil.copytree(root, copy, ignore=lambda folder, names: [
            n for n in names if not n.endswith(".py") and not (Path(folder) / n).is_dir()])
        # the implement findings too (SC010-SC012, SC014: the worker line's classes are fixed where a model fits)
        subprocess.run([sys.executable, "-m", "spec_contract", "check", str(copy), "--fix", "--no-cache",
                        "--select", "SC001,SC002,SC003,SC004,SC005,SC010,SC011,SC012,SC013,SC014"],
                       env=env_with_cache(None), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        out: dict[str, dict[str, dict[str, Facts]]] = {}
        for rel, cls in sorted(wanted):
            before = class_members(ast.parse((root / rel).read_bytes())).get(cls, {})
            after = class_members(ast.parse((copy / rel).read_bytes())).get(cls, {})
            added = {m: with_new_helpers(facts["paths"], after, before) for m, facts in after.items()
                     if m not in before}
            if added:
                out.setdefault(rel, {})[cls] = added
    return out


def candidates(old: Facts, new: Facts) -> Iterator[tuple[str, str, str, Facts]]:
    """(path, class, member, facts) for every member a class that existed gained between the releases."""
    elsewhere: dict[str, list[Facts]] = {}  # a class that moved to another file is the same class
    for file in old.values():
        for cls, members in file["classes"].items():
            elsewhere.setdefault(cls, []).append(members)
    for rel, file in new.items():
        for cls, members in file["classes"].items():
            before = old.get(rel, {}).get("classes", {}).get(cls)
            if before is None and len(elsewhere.get(cls, [])) == 1:
                before = elsewhere[cls][0]
            if before is not None:
                for member, facts in members.items():
                    if member not in before:
                        yield rel, cls, member, {**facts, "paths": with_new_helpers(facts["paths"], members, before)}


def pair_facts(root: Path, cache: Path, old: Facts, new: Facts, pair: str) -> Facts:
    """For the older release of a pair: the check's JSON (findings, contract) and, in this process, the
    registered classes with their MROs, which gained members the older classes already provided (own body,
    bases, ``__getattr__``), and the bodies the tool generates for the implement fixes. Cached by tool hash."""
    cached = cache / f"{pair}-tool-{tool_hash()}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    from spec_contract.engine import Project, load_config
    from spec_contract.engine.resolve.index import ClassKey  # the key type the index answers with

    report = run_check(root, None, no_cache=True).result
    contract = sorted({entry["method"] for entry in report["contract"]})
    analysis = Project(root, load_config(root), use_cache=False).analyze()
    index = analysis.index
    module_of = {source.rel: source.module for source in analysis.models}

    def where(key: Any) -> str:
        path = index.path_of(key.module)
        return f"{Path(path).relative_to(root).as_posix() if path else key.module}::{key.qualname}"

    provided = [f"{rel}::{cls}.{member}" for rel, cls, member, _ in candidates(old, new)
                if member in contract and rel in module_of
                and index.provision(ClassKey(module_of[rel], cls), member) is not None]
    tool = {"findings": report["findings"], "contract": contract, "provided": provided,
            "registered": {where(key): [where(base) for base in index.mro(key)] for key in analysis.checked}}
    wanted = {(f["path"], f["class"]) for f in fixes("", "", old, new, tool) if f["kind"] == "implement"}
    # check --fix edits only files holding a finding (or listed by one): without one, there is nothing to run
    # it for
    holding = {f.get("path") for f in report["findings"]} | {
        c.get("path") for f in report["findings"] for c in f.get("classes", [])}
    tool["generated"] = _generated(root, {w for w in wanted if w[0] in holding})
    cached.write_text(json.dumps(tool))
    return tool


def cached_upstream(root: Path, cache: Path) -> Facts:
    cached = cache / f"{root.parent.name}-upstream-{miner_hash()}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    facts = upstream_facts(root)
    cached.write_text(json.dumps(facts))
    return facts


# --- the fixes and whether the tool named them -----------------------------------------------------------
def fixes(older: str, newer: str, old: Facts, new: Facts, tool: Facts) -> list[Facts]:
    """Members upstream added between the releases to classes that existed, the older contract held and the
    older class did not provide."""
    contract = set(tool["contract"])
    provided = set(tool["provided"])
    added: list[Facts] = []
    for rel, cls, member, facts in candidates(old, new):
        if member in contract and f"{rel}::{cls}.{member}" not in provided:
            added.append({"older": older, "newer": newer, "path": rel, "class": cls, "member": member,
                          "kind": "forward" if hands_over(member, facts["paths"]) else "implement",
                          "upstream_attr_paths": facts["paths"]})
    implemented = {(f["class"], f["member"]) for f in added if f["kind"] == "implement"}
    for fix in added:  # a forward whose inner got the member in the same release: a chain
        names = set(new[fix["path"]]["names"])
        if fix["kind"] == "forward" and any(c in names and m == fix["member"] for c, m in implemented
                                            if c != fix["class"]):
            fix["kind"] = "chain"
    return added


def _named_members(finding: Facts) -> Iterator[tuple[str, str, str | None]]:
    """(path, class, member) triples a finding names: its own, the members past a gate (``also``) or that its
    fix implements (``implements``), and any classes it lists (a worker-line warning lists each class, with
    its own path, and its members)."""
    path = finding.get("path")
    yield path, finding.get("class", ""), finding.get("method", "")
    for extra in finding.get("also", []) + finding.get("implements", []):
        yield path, finding.get("class", ""), extra.get("method", "")
    # a chain: implemented in the language model, which the finding names as where to implement it
    for extra in finding.get("implements", []) + [i for c in finding.get("classes", []) for i in c.get("implements", [])]:
        if extra.get("in_class") and extra.get("in_path"):
            yield extra["in_path"], extra["in_class"], extra.get("method", "")
        # an implementation whose decoder must capture aux hidden states too names that decoder as a class
        # the fix of this member edits (upstream may have put the member itself there)
        if extra.get("capture"):
            yield extra["capture"]["decoder_path"], extra["capture"]["decoder"], extra.get("method", "")
    for member in finding.get("members", []):
        yield path, finding.get("class", ""), member if isinstance(member, str) else member.get("method", "")
    for listed in finding.get("classes", []):
        for member in listed.get("members", []):
            yield (listed.get("path", path), listed.get("class", ""),
                   member if isinstance(member, str) else member.get("method", ""))


def named(fix: Facts, tool: Facts) -> bool:
    target = f"{fix['path']}::{fix['class']}"
    classes = {fix["class"]} | {where.split("::")[1] for where, mro in tool["registered"].items() if target in mro}
    paths = {fix["path"]} | {where.split("::")[0] for where, mro in tool["registered"].items() if target in mro}
    for finding in tool["findings"]:
        for path, cls, member in _named_members(finding):
            if member == fix["member"] and cls in classes and (path in paths or path is None):
                return True
    return False


def body_match(fix: Facts, tool: Facts) -> bool | None:
    """Whether the generated body reads and writes upstream's attribute paths; None: the tool generates none."""
    generated = tool["generated"].get(fix["path"], {}).get(fix["class"], {}).get(fix["member"])
    if generated is None:
        return None
    return bool(generated == fix["upstream_attr_paths"])


COLUMNS = ("fixes", "named", "forward", "implement", "chain", "body same", "differs", "none")


def counts(found: list[Facts], tool_rows: list[Facts]) -> list[int]:
    """One row of the table: fixes, named, the three kinds, and the implement fixes by generated body."""
    kinds = [sum(f["kind"] == k for f in found) for k in ("forward", "implement", "chain")]
    bodies = [sum(r["body"] is b for f, r in zip(found, tool_rows) if f["kind"] == "implement")
              for b in (True, False, None)]
    return [len(found), sum(r["named"] for r in tool_rows), *kinds, *bodies]


def table(rows: list[tuple[str, list[int]]]) -> str:
    """Per pair and in total: the fixes, how many the tool named, the kinds, and for implement fixes whether
    the body the tool generates uses upstream's attribute paths (same / differs / none generated)."""
    width = max(len(c) for c in COLUMNS) + 2
    head = f"{'pair':<16}" + "".join(f"{c:>{width}}" for c in COLUMNS)
    total = [sum(column) for column in zip(*(r for _, r in rows))] if rows else [0] * len(COLUMNS)
    lines = [head, "-" * len(head)]
    lines += [f"{pair:<16}" + "".join(f"{v:>{width}}" for v in row) for pair, row in rows]
    lines += ["-" * len(head), f"{'total':<16}" + "".join(f"{v:>{width}}" for v in total)]
    if total[0]:
        lines.append(f"named {total[1]} of {total[0]} ({100 * total[1] / total[0]:.0f} %); implement fixes whose "
                     f"generated body uses upstream's attribute paths: {total[5]} of {total[3]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rel", type=Path, help="folder holding sglang-V/sglang for each release")
    parser.add_argument("--releases", default="0.5.8,0.5.9,0.5.10,0.5.11,0.5.12,0.5.13,0.5.14,0.5.15,0.5.16")
    parser.add_argument("--cache", type=Path, required=True, help="folder for the per-release facts")
    parser.add_argument("--fixes", type=Path, help="write the ground truth (the fixes) here as JSON")
    parser.add_argument("--table", type=Path, help="write the table here too")
    parser.add_argument("--list", action="store_true", help="list every fix: kind, named or not, generated body")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    releases = [v.strip() for v in args.releases.split(",") if v.strip()]
    roots = {v: args.rel / f"sglang-{v}" / "sglang" for v in releases}
    for version, root in roots.items():
        if not (root / MODELS).is_dir():
            parser.error(f"{root}: no {MODELS} (unpack the sglang {version} wheel there)")
    upstream = {v: cached_upstream(root, args.cache) for v, root in roots.items()}
    rows: list[tuple[str, list[int]]] = []
    truth: list[Facts] = []
    for older, newer in zip(releases, releases[1:]):
        print(f"{older} -> {newer}", file=sys.stderr)
        tool = pair_facts(roots[older], args.cache, upstream[older], upstream[newer], f"{older}-{newer}")
        found = fixes(older, newer, upstream[older], upstream[newer], tool)
        tool_rows = [{"named": named(f, tool), "body": body_match(f, tool)} for f in found]
        rows.append((f"{older}->{newer}", counts(found, tool_rows)))
        truth += found
        if args.list:
            for fix, row in zip(found, tool_rows):
                body = {True: "body same", False: "body differs", None: "no body"}[row["body"]]
                print(f"  {'named' if row['named'] else 'MISSED'} {fix['kind']:<9} {fix['path']}::{fix['class']}."
                      f"{fix['member']}{'  ' + body if fix['kind'] == 'implement' else ''}")
    text = table(rows)
    print(text)
    if args.fixes:
        args.fixes.parent.mkdir(parents=True, exist_ok=True)
        args.fixes.write_text(json.dumps(truth, indent=1) + "\n")
    if args.table:
        args.table.parent.mkdir(parents=True, exist_ok=True)
        args.table.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
