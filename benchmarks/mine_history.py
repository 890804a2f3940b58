"""Upstream's own fixes as the acceptance test (issues 20 and 36): how many of them would the tool have named?

For each consecutive pair of releases of an engine (unpacked wheels in ``REL/<engine>-V/<engine>``: SGLang's
models in ``srt/models/``, vLLM's in ``model_executor/models/`` and ``models/``; see
``history_upstream.LAYOUTS``), a *fix* is what upstream added to a model class that already existed, that the
older class did not provide and that the older release's derived contract held for the role the fix serves:
the older release had the bug. ``history_fixes`` says which candidates the rules exclude (a same-named new
class, a refactor, a use that arrived with the member, a mixin that is part of a declaration, an inner class no
holder hands the member to), and why. Each
fix is one of

- ``forward``: the new body hands the member to an attribute (``return self.model.get_embed_and_head()``,
  possibly under a ``hasattr`` guard);
- ``implement``: a body of its own (``return self.model.embed_tokens.weight, self.lm_head.weight``);
- ``chain``: a forward whose inner class got the same member in the same release;
- ``declare``: a gated capability added to the class's bases (vLLM's ``SupportsEagle3``).

The tool *names* a fix when ``check --format json`` on the older release has a finding of any code or
severity on that class, or on a registered subclass of it (the classes the tool checks, as its own reading of
the engine's registry finds them), that names the member (a declaration: the capability, on the class or on
the wrapper whose language model the class is). For implement fixes the miner also compares the body the tool
generates (what ``check --fix`` writes on a scratch copy of the release) with upstream's: the same attribute
paths read and written (``self.model.embed_tokens``, ``self.lm_head``).

Everything is read, never imported or executed; upstream code is never copied anywhere but the cache.
Per release, the upstream facts and the tool's facts are cached in ``--cache`` (the tool's keyed by a hash of
this checkout's package and of the miner, so an edited engine is measured again).
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
from history_fixes import RULES, candidates, site_reader, sort_candidates
from history_upstream import LAYOUTS, Facts, Layout, class_members, upstream_facts, with_new_helpers

MINER = ("mine_history.py", "history_fixes.py", "history_upstream.py")


# --- the tool on one release -----------------------------------------------------------------------------
def miner_hash() -> str:
    """The miner's own hash: what it extracts is part of every cached fact."""
    digest = hashlib.sha1()
    for name in MINER:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()[:12]


def package_hash() -> str:
    """This checkout's package: a change to it measures the tool again."""
    digest = hashlib.sha1()
    for path in sorted((REPO / "server" / "spec_contract").rglob("*")):
        if path.suffix in (".py", ".toml") and path.is_file():
            digest.update(path.relative_to(REPO).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def tool_hash() -> str:
    """The package and the miner: what the miner asks the tool's index changes with either."""
    return hashlib.sha1(f"{miner_hash()} {package_hash()}".encode()).hexdigest()[:12]


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


def release_check(root: Path, cache: Path, name: str) -> Facts:
    """``check --format json`` on one release, as a user runs it: its findings, contract and gated
    capabilities. Cached by the package's hash (``name``: the release's folder name)."""
    cached = cache / f"{name}-check-{package_hash()}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    report = run_check(root, None, no_cache=True).result
    facts = {key: report.get(key, []) for key in ("findings", "contract", "capabilities")}
    cached.write_text(json.dumps(facts))
    return facts


def pair_facts(roots: tuple[Path, Path], cache: Path, upstream: tuple[Facts, Facts],
               checks: tuple[Facts, Facts]) -> Facts:
    """For a pair of releases: the older release's check (findings, contract, capabilities), and, read in this
    process from the tool's index of the older release, its registered classes with their MROs, the gated
    capabilities' Protocol and mixin names and what each candidate's older class already provided (own body,
    bases, ``__getattr__``; a capability through a base) and the files where an older class declares a
    capability whose mixin a candidate gained; then the fixes and exclusions, and the bodies the tool
    generates for the implement fixes. Cached by tool hash."""
    root, newer = roots
    old, new = upstream
    cached = cache / f"{root.parent.name}-{newer.parent.name}-tool-{tool_hash()}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    from spec_contract.engine import Project, load_config

    analysis = Project(root, load_config(root), use_cache=False).analyze()
    index = analysis.index

    def where(key: Any) -> str:
        path = index.path_of(key.module)
        return f"{Path(path).relative_to(root).as_posix() if path else key.module}::{key.qualname}"

    sites = {cap["protocol"].rsplit(".", 1)[-1]: cap.get("gate_sites", []) for cap in checks[0]["capabilities"]}
    capabilities = [{"protocol": cap.protocol.qualname, "mixin": cap.mixin.qualname if cap.mixin else None,
                     "sites": sites.get(cap.protocol.qualname, [])} for cap in analysis.capabilities]
    gated = {c["protocol"]: "protocol" for c in capabilities} | {c["mixin"]: "mixin" for c in capabilities if c["mixin"]}
    members = {e["method"] for check in checks for e in check["contract"]}
    found = candidates(old, new, members, gated)
    provided, declaring = _what_older_classes_had(analysis, found, old, capabilities)
    built = _built(index, analysis.checked)
    tool = {**checks[0], "capabilities": capabilities, "gated": gated, "provided": provided, "declaring": declaring,
            "registered": {where(key): [where(base) for base in index.mro(key)] for key in analysis.checked},
            "built": sorted(where(key) for key in built),
            "unreached": _unreached(analysis, found, built, where)}
    tool["fixes"], tool["excluded"] = sort_candidates(found, old, new, tool, checks[1]["contract"], site_reader(root))
    wanted = {(f["path"], f["class"]) for f in tool["fixes"] if f["kind"] == "implement"}
    # check --fix edits only files holding a finding (or listed by one): without one, there is nothing to run
    # it for
    holding = {f.get("path") for f in tool["findings"]} | {
        c.get("path") for f in tool["findings"] for c in f.get("classes", [])}
    tool["generated"] = _generated(root, {w for w in wanted if w[0] in holding})
    cached.write_text(json.dumps(tool))
    return tool


def _built(index: Any, checked: tuple[Any, ...]) -> set[Any]:
    """The classes a run of the release builds: those the tool checks (registered, playing a role), their
    bases, and the parts they hold, transitively (an MTP head's ``self.model`` predictor)."""
    built: set[Any] = set()
    todo = list(checked)
    while todo:
        key = todo.pop()
        if key in built:
            continue
        built.add(key)
        for owner in index.mro(key):
            todo.append(owner)
            todo += [inner for inners in index.delegates(owner).values() for inner in inners]
    return built


def _unreached(analysis: Any, found: list[Facts], built: set[Any], where: Any) -> dict[str, str]:
    """The member candidates of classes the older release only holds (an inner decoder: no registered class is
    or derives from it) that no holder's own body hands the member to (``self.model.m(...)``, untested): a
    worker's call stops at the holder, which has the member or lacks it, and never reaches the held class.
    ``path::class.member`` → why."""
    from spec_contract.engine.check.lookup import landing
    from spec_contract.engine.resolve.index import ClassKey

    index = analysis.index
    registered = {base for key in analysis.checked for base in index.mro(key)}
    module_of = {source.rel: source.module for source in analysis.models}
    out: dict[str, str] = {}
    for candidate in (c for c in found if c["gained"] == "member" and c["older_path"] in module_of):
        key, member = ClassKey(module_of[candidate["older_path"]], candidate["class"]), candidate["member"]
        if key not in built or key in registered:
            continue
        holders = sorted((h for h in built if any(key in inners for inners in index.delegates(h).values())),
                         key=lambda h: h.qualname)
        reached = False
        for holder in holders:
            provision = index.provision(holder, member)
            owner = index.class_summary(provision.owner) if provision is not None else None
            reached = reached or any(forwarded == member and key in (landing(index, holder, attr) or ())
                                     for forwarded, attr in (owner.unguarded_forwards if owner is not None else ()))
        if not reached:
            names = ", ".join(h.qualname for h in holders[:3]) + (" …" if len(holders) > 3 else "")
            out[f"{candidate['older_path']}::{candidate['class']}.{member}"] = (
                f"only held (by {names}), and no holder's `{member}` hands the call to it")
    return out


def _what_older_classes_had(analysis: Any, found: list[Facts], old: Facts,
                            capabilities: list[Facts]) -> tuple[dict[str, str], list[str]]:
    """What the tool's index of the older release says of the candidates' older classes: which already had the
    member (``path::class.member`` → where from: a base, ``__getattr__``, an assignment in the class's body)
    or declared the capability through a base; and the older files where a class declares the capability a
    mixin candidate belongs to (a run reaches the mixin's assertion only through such a class)."""
    from spec_contract.engine.resolve.index import ClassKey  # the key type the index answers with

    index = analysis.index
    module_of = {source.rel: source.module for source in analysis.models}
    keys = {cap.protocol.qualname: cap.protocol for cap in analysis.capabilities}
    keys.update({cap.mixin.qualname: cap.mixin for cap in analysis.capabilities if cap.mixin is not None})
    protocol_of = {c["mixin"]: c["protocol"] for c in capabilities if c["mixin"]}
    provided: dict[str, str] = {}
    declaring: set[str] = set()
    for candidate in (c for c in found if c["older_path"] in module_of):
        module = module_of[candidate["older_path"]]
        key = ClassKey(module, candidate["class"])
        if candidate["gained"] == "member":
            provision = index.provision(key, candidate["member"])
            owner = None if provision is None else provision.owner.qualname
            if provision is not None and provision.member is None:
                owner = f"{owner}.__getattr__"
            elif provision is not None and provision.owner == key:
                owner = f"{owner} itself (not a def: an assignment in its body)"
        else:
            owner = next((base.qualname for base in index.mro(key)[1:] if base == keys[candidate["member"]]), None)
        if owner is not None:
            provided[f"{candidate['older_path']}::{candidate['class']}.{candidate['member']}"] = owner
        if candidate["gained"] == "mixin" and any(keys[protocol_of[candidate["member"]]] in index.mro(ClassKey(module, cls))
                                                  for cls in old[candidate["older_path"]]["classes"]):
            declaring.add(candidate["older_path"])
    return provided, sorted(declaring)


def cached_upstream(root: Path, layout: Layout, cache: Path) -> Facts:
    cached = cache / f"{root.parent.name}-upstream-{miner_hash()}.json"
    if cached.is_file():
        return json.loads(cached.read_text())
    facts = upstream_facts(root, layout)
    cached.write_text(json.dumps(facts))
    return facts


# --- whether the tool named each fix ---------------------------------------------------------------------
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
    """Whether a finding on the older release names the fix: its member (a declaration's capability) on the
    class or a registered subclass; a declaration also on the wrapper whose language model the class is."""
    target = f"{fix['path']}::{fix['class']}"
    classes = {fix["class"]} | {where.split("::")[1] for where, mro in tool["registered"].items() if target in mro}
    paths = {fix["path"]} | {where.split("::")[0] for where, mro in tool["registered"].items() if target in mro}
    wanted = fix.get("capability", fix["member"])
    for finding in tool["findings"]:
        if fix["kind"] == "declare" and finding.get("method") == wanted and finding.get("inner_class") == fix["class"]:
            return True
        for path, cls, member in _named_members(finding):
            if member == wanted and cls in classes and (path in paths or path is None):
                return True
    return False


def body_match(fix: Facts, tool: Facts) -> bool | None:
    """Whether the generated body reads and writes upstream's attribute paths; None: the tool generates none."""
    generated = tool["generated"].get(fix["path"], {}).get(fix["class"], {}).get(fix["member"])
    if generated is None:
        return None
    return bool(generated == fix["upstream_attr_paths"])


# --- the table -------------------------------------------------------------------------------------------
KINDS = ("forward", "implement", "chain", "declare")
COLUMNS = ("candidates", *RULES, "fixes", "named", "%", *KINDS, "body same", "differs", "none")


def counts(found: list[Facts], excluded: list[Facts]) -> list[int]:
    """One row of the table (without its %): the candidates, how many each rule excluded, the fixes, how many
    the tool named, the kinds, and the implement fixes by generated body."""
    rules = [sum(e["rule"] == rule for e in excluded) for rule in RULES]
    kinds = [sum(f["kind"] == k for f in found) for k in KINDS]
    bodies = [sum(f["body"] is b for f in found if f["kind"] == "implement") for b in (True, False, None)]
    return [len(found) + len(excluded), *rules, len(found), sum(f["named"] for f in found), *kinds, *bodies]


def _percent(row: list[int]) -> list[str]:
    fixes = 1 + len(RULES)
    share = f"{100 * row[fixes + 1] / row[fixes]:.0f}" if row[fixes] else "-"
    return [str(v) for v in row[:fixes + 2]] + [share] + [str(v) for v in row[fixes + 2:]]


def total(rows: list[tuple[str, list[int]]]) -> list[int]:
    return [sum(column) for column in zip(*(r for _, r in rows))] if rows else [0] * (len(COLUMNS) - 1)


def table(engine: str, rows: list[tuple[str, list[int]]]) -> str:
    """Per pair and in total: the candidates and what each rule excluded, the fixes, how many (and what
    share) the tool named, the kinds, and for implement fixes whether the body the tool generates uses
    upstream's attribute paths (same / differs / none generated)."""
    widths = [max(len(c), 3) + 2 for c in COLUMNS]
    first = max([len(engine)] + [len(pair) for pair, _ in rows] + [5]) + 2

    def line(label: str, cells: list[str]) -> str:
        return f"{label:<{first}}" + "".join(f"{v:>{w}}" for v, w in zip(cells, widths))

    head = line(engine, list(COLUMNS))
    summed = total(rows)
    lines = [head, "-" * len(head), *(line(pair, _percent(row)) for pair, row in rows), "-" * len(head),
             line("total", _percent(summed))]
    return "\n".join(lines)


def summary(label: str, summed: list[int]) -> str:
    fixes = 1 + len(RULES)
    if not summed[fixes]:
        return f"{label}: no fixes"
    implement = summed[fixes + 2 + KINDS.index("implement")]
    return (f"{label}: named {summed[fixes + 1]} of {summed[fixes]} ({100 * summed[fixes + 1] / summed[fixes]:.0f} %); "
            f"implement fixes whose generated body uses upstream's attribute paths: {summed[-3]} of {implement}")


# --- one engine's range, and the command -----------------------------------------------------------------
def _sites(fix: Facts) -> str:
    """The older release's call sites of a fix, each with what limits it (a guard, a rare condition)."""
    def limits(site: Facts) -> str:
        said = ["guarded"] if site.get("guarded") else []
        said += [f"only when {site['condition']}"] if site.get("condition") else []
        return f" ({', '.join(said)})" if said else ""
    return "; ".join(f"{s['path']}:{s['line']}{limits(s)} `{s['text']}`" for s in fix["older_sites"])


def listing(fix: Facts) -> str:
    body = {True: "body same", False: "body differs", None: "no body"}[fix["body"]]
    return (f"  {'named' if fix['named'] else 'MISSED'} {fix['kind']:<9} {fix['path']}::{fix['class']}.{fix['member']}"
            f"{'  ' + body if fix['kind'] == 'implement' else ''}  [{', '.join(fix['roles'])}] older: {_sites(fix)}")


def mine(layout: Layout, rel: Path, releases: list[str], cache: Path,
         show: bool) -> tuple[list[tuple[str, list[int]]], list[Facts], list[Facts]]:
    """The table rows of one engine's range, its fixes (each with whether the tool named it and the body it
    generates) and the candidates the rules excluded; ``show`` prints each fix and exclusion."""
    roots = {v: layout.root(rel, v) for v in releases}
    upstream = {v: cached_upstream(root, layout, cache) for v, root in roots.items()}
    checks = {v: release_check(root, cache, root.parent.name) for v, root in roots.items()}
    rows: list[tuple[str, list[int]]] = []
    truth: list[Facts] = []
    dropped: list[Facts] = []
    for older, newer in zip(releases, releases[1:]):
        print(f"{layout.engine} {older} -> {newer}", file=sys.stdout if show else sys.stderr)
        tool = pair_facts((roots[older], roots[newer]), cache, (upstream[older], upstream[newer]),
                          (checks[older], checks[newer]))
        pair = {"engine": layout.engine, "older": older, "newer": newer}
        found = [{**pair, **fix, "named": named(fix, tool), "body": body_match(fix, tool)} for fix in tool["fixes"]]
        excluded = [{**pair, **e} for e in tool["excluded"]]
        rows.append((f"{older}->{newer}", counts(found, excluded)))
        truth += found
        dropped += excluded
        if show:
            for line in [listing(fix) for fix in found] + [
                    f"  excluded {e['rule']:<10} {e['path']}::{e['class']}.{e['member']}: {e['why']}" for e in excluded]:
                print(line)
    return rows, truth, dropped


def _write(path: Path | None, text: str) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rel", type=Path, help="folder holding <engine>-V/<engine> for each release")
    parser.add_argument("--engine", choices=sorted(LAYOUTS), help="one engine (default: each, over its range)")
    parser.add_argument("--releases", help="the releases to mine, in order (with --engine; default: "
                        + "; ".join(f"{e} {','.join(layout.releases)}" for e, layout in LAYOUTS.items()) + ")")
    parser.add_argument("--cache", type=Path, required=True, help="folder for the per-release facts")
    parser.add_argument("--fixes", type=Path, help="write the fixes here as JSON (with whether the tool named each)")
    parser.add_argument("--excluded", type=Path, help="write the candidates the rules excluded here as JSON")
    parser.add_argument("--table", type=Path, help="write the tables here too")
    parser.add_argument("--list", action="store_true", help="list every fix and every exclusion, with its reason")
    args = parser.parse_args(argv)
    if args.releases and not args.engine:
        parser.error("--releases needs --engine")
    args.cache.mkdir(parents=True, exist_ok=True)
    ranges = {engine: (LAYOUTS[engine], list(layout.releases)) for engine, layout in LAYOUTS.items()
              if args.engine in (None, engine)}
    if args.releases:
        ranges[args.engine] = (LAYOUTS[args.engine], [v.strip() for v in args.releases.split(",") if v.strip()])
    for layout, releases in ranges.values():
        for version in releases:
            root = layout.root(args.rel, version)
            if not any((root / folder).is_dir() for folder in layout.models):
                parser.error(f"{root}: no {' or '.join(layout.models)} (unpack the {layout.engine} {version} wheel there)")
    texts: list[str] = []
    everything: list[tuple[str, list[int]]] = []
    truth: list[Facts] = []
    dropped: list[Facts] = []
    for engine, (layout, releases) in ranges.items():
        rows, found, excluded = mine(layout, args.rel, releases, args.cache, args.list)
        texts += [table(engine, rows), summary(engine, total(rows)), ""]
        everything += rows
        truth += found
        dropped += excluded
    if len(ranges) > 1:
        texts.append(summary("all engines", total(everything)))
    text = "\n".join(texts).rstrip("\n")
    print(text)
    _write(args.fixes, json.dumps(truth, indent=1) + "\n")
    _write(args.excluded, json.dumps(dropped, indent=1) + "\n")
    _write(args.table, text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
