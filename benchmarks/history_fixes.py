"""Which of the members upstream added between two releases fix a bug the older release had (issue 36): the
rules that tell a fix from what only looks like one, each named, so that a reader can audit every count.

A *candidate* is what a class of the newer release gained over the class of the same name in the older
release (the same file, or the only class of that name elsewhere when the file moved): a member of its own
body that the older or the newer release's contract holds, or a gated capability added to its bases (vLLM's
``SupportsEagle3``, which the model runner's ``supports_eagle3`` check asks for, or the mixin its defaults
assert the language model is). It is a fix only when the older release's use actually reaches the older
class; the rules, in order, exclude:

- ``new class``: the older class of that name is another class (it was rewritten, or another class took the
  name): not the same file with the same bases, and less than half of the smaller class's source lines shared;
- ``unbuilt``: no run of the older release builds the older class: no class it registers is, derives from or
  holds it (a class written ahead of its registry entry), so no use reached it;
- ``refactor``: the older class provided the member after all (through a base or ``__getattr__``, as the
  tool's index of the older release resolves it), or declared the capability through a base: it moved, or
  a base was renamed, and no run of the older release missed it;
- ``arrived``: the older contract does not hold the member for any role the newer contract uses it in (the
  worker call came with the member); for a capability, the older release has no gate site for it; for a
  mixin, no class of the older file declares the capability, so no run reached the default that asserts it
  (the declaration came later);
- ``folded``: a mixin added in the release and file that add the capability to a class: one fix, the
  declaration's, counted once (asked before ``arrived``, which a mixin that no older class reached meets too);
- ``unreached``: the older class is only held (an inner decoder: no registered class is or derives from it),
  and no holder's own body hands the member to it untested (``self.model.m(...)``): a worker's call stops at
  the holder, which had the member itself or lacked it, so upstream moved work inward (SGLang 0.5.6's
  ``Qwen2MoeModel.set_eagle3_layers_to_capture``, which ``Qwen2MoeForCausalLM`` had done in its own body).

A base-list change counts as a fix (kind ``declare``) because the contract gates on it, and the gate costs
what a crash costs: vLLM asks ``supports_eagle3`` of the loaded model and raises a ``RuntimeError``, after the
weights have loaded, for every EAGLE-3 run with a class that does not declare it. That holds whether upstream
declared a language model that was ready (the wrapper forgot) or also made its decoder the mixin (support
written for the release): either way the older release's run died after the load. The tool names it when a
finding on the class (or on a wrapper whose language model the class is) names the capability.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from history_upstream import Facts, hands_over, with_new_helpers

RULES = ("new class", "unbuilt", "refactor", "arrived", "folded", "unreached")
SAME_CLASS_SHARE = 0.5  # of the smaller class's source lines: below it, two classes of one name are two classes


def candidates(old: Facts, new: Facts, members: set[str], gated: dict[str, str]) -> list[Facts]:
    """What each class that kept its name gained between the releases: ``members`` are the contract's (either
    release's), ``gated`` the capability names a base can add (Protocol or mixin name → ``"protocol"`` or
    ``"mixin"``). Each candidate names its class's file in both releases."""
    elsewhere: dict[str, list[str]] = {}  # a class that moved to another file is the same class
    for rel, file in old.items():
        for cls in file["classes"]:
            elsewhere.setdefault(cls, []).append(rel)
    out: list[Facts] = []
    for rel, file in new.items():
        for cls, own in file["classes"].items():
            moved = elsewhere.get(cls, [])
            older = rel if cls in old.get(rel, {}).get("classes", {}) else moved[0] if len(moved) == 1 else None
            if older is None:
                continue
            where = {"older_path": older, "path": rel, "class": cls}
            before = old[older]["classes"][cls]
            for member, facts in own.items():
                if member not in before and member in members:
                    out.append({**where, "member": member, "gained": "member",
                                "paths": with_new_helpers(facts["paths"], own, before)})
            had = {base.rsplit(".", 1)[-1] for base in old[older]["bases"][cls]}
            for base in file["bases"][cls]:
                name = base.rsplit(".", 1)[-1]
                if name in gated and name not in had:
                    out.append({**where, "member": name, "gained": gated[name]})
    return out


def shared(old: Facts, new: Facts, candidate: Facts) -> float:
    """The share of the smaller class's source lines the two releases' classes have in common."""
    before = set(old[candidate["older_path"]]["fingerprint"][candidate["class"]])
    after = set(new[candidate["path"]]["fingerprint"][candidate["class"]])
    return len(before & after) / max(1, min(len(before), len(after)))


def _new_class(candidate: Facts, old: Facts, new: Facts, gated: dict[str, str]) -> str | None:
    cls = candidate["class"]
    bases = [[b for b in file[path]["bases"][cls] if b.rsplit(".", 1)[-1] not in gated]  # the fix itself aside
             for file, path in ((old, candidate["older_path"]), (new, candidate["path"]))]
    share = shared(old, new, candidate)
    if (candidate["older_path"] == candidate["path"] and bases[0] == bases[1]) or share >= SAME_CLASS_SHARE:
        return None
    moved = "" if candidate["older_path"] == candidate["path"] else f", moved from {candidate['older_path']}"
    return f"{share:.0%} of the smaller class's lines shared, bases {bases[0]} -> {bases[1]}{moved}"


def _unbuilt(candidate: Facts, built: list[str]) -> str | None:
    where = f"{candidate['older_path']}::{candidate['class']}"
    return None if where in built else "no class the older release registers is, derives from or holds it"


def _refactor(candidate: Facts, provided: dict[str, str]) -> str | None:
    owner = provided.get(f"{candidate['older_path']}::{candidate['class']}.{candidate['member']}")
    return None if owner is None else f"the older class had it from {owner}"


def older_uses(candidate: Facts, tool: Facts, contract_new: list[Facts]) -> tuple[list[str], list[Facts], str | None]:
    """The roles a fix serves and the older release's call sites that use the member in them (a
    capability's: its gate sites), or why the older release's use does not reach it (the ``arrived`` rule).
    ``tool``: the older release's contract, capabilities, and the files where an older class declared each
    capability (``declaring``: a mixin is reached only through a class that declares its capability)."""
    if candidate["gained"] != "member":
        capability = next(c for c in tool["capabilities"] if candidate["member"] in (c["protocol"], c["mixin"]))
        if not capability["sites"]:
            return [], [], f"the older release has no gate site for {capability['protocol']}"
        if candidate["gained"] == "mixin" and candidate["older_path"] not in tool["declaring"]:
            return [], [], (f"no class of the older file declares {capability['protocol']}: no run reached the "
                            f"assertion that its language model is an {candidate['member']}")
        return ["target"], capability["sites"], None
    roles_old = {e["role"]: e["call_sites"] for e in tool["contract"] if e["method"] == candidate["member"]}
    roles_new = {e["role"] for e in contract_new if e["method"] == candidate["member"]}
    roles = sorted(set(roles_old) & roles_new if roles_new else set(roles_old))
    if not roles:
        return [], [], (f"the older contract holds it for {', '.join(sorted(roles_old)) or 'no role'}, the "
                        f"newer for {', '.join(sorted(roles_new))}")
    return roles, [site for role in roles for site in roles_old[role]], None


def sort_candidates(found: list[Facts], old: Facts, new: Facts, tool: Facts, contract_new: list[Facts],
                    line_of: Callable[[str, int], str]) -> tuple[list[Facts], list[Facts]]:
    """The candidates that are fixes, each with its roles and the older release's call sites (``line_of``
    reads a site's text), and the ones a rule excluded, each with the rule and why. ``tool``: the older
    release's contract, capabilities (each with its gate ``sites``), gated names, the files declaring each
    (``declaring``) and what the older classes provided (``provided``: ``path::class.member`` → where from)."""
    kept: list[Facts] = []
    excluded: list[Facts] = []
    mixins = {cap["mixin"]: cap["protocol"] for cap in tool["capabilities"] if cap["mixin"]}
    # the declarations first: a mixin added in a file that declares its capability in the same release is
    # part of that fix
    for candidate in sorted(found, key=lambda c: c["gained"] == "mixin"):
        roles, sites, arrived = older_uses(candidate, tool, contract_new)
        declared = candidate["gained"] == "mixin" and any(
            (c["path"], c["member"]) == (candidate["path"], mixins[candidate["member"]]) for c in kept)
        for rule, why in (("new class", _new_class(candidate, old, new, tool["gated"])),
                          ("unbuilt", _unbuilt(candidate, tool["built"])),
                          ("refactor", _refactor(candidate, tool["provided"])),
                          ("folded", f"part of declaring {mixins.get(candidate['member'])} in this file" if declared
                           else None), ("arrived", arrived),
                          ("unreached", tool.get("unreached", {}).get(
                              f"{candidate['older_path']}::{candidate['class']}.{candidate['member']}"))):
            if why is not None:
                excluded.append({**candidate, "rule": rule, "why": why})
                break
        else:
            kept.append({**candidate, "roles": roles, "older_sites": [
                {"path": s["path"], "line": s["line"], "text": line_of(s["path"], s["line"]),
                 **{k: s[k] for k in ("guarded", "phase", "condition", "algorithm") if k in s}} for s in sites]})
    capability_of = {cap["protocol"]: cap["protocol"] for cap in tool["capabilities"]} | mixins
    return [_classified(fix, new, kept, capability_of) for fix in kept], excluded


def _classified(fix: Facts, new: Facts, kept: list[Facts], capability_of: dict[str, str]) -> Facts:
    """A fix with its kind: ``declare`` (a capability in the bases; ``capability`` names the Protocol a mixin
    is declared for), ``forward`` (the body hands the member to an attribute), ``implement`` (a body of its
    own), or ``chain`` (a forward whose inner class, named in the module, got the member in the same release)."""
    out = {"path": fix["path"], "older_path": fix["older_path"], "class": fix["class"], "member": fix["member"],
           "roles": fix["roles"], "older_sites": fix["older_sites"]}
    if fix["gained"] != "member":
        return {**out, "kind": "declare", "capability": capability_of[fix["member"]],
                "upstream_attr_paths": {"read": [], "write": []}}
    kind = "forward" if hands_over(fix["member"], fix["paths"]) else "implement"
    implemented = {(c["class"], c["member"]) for c in kept
                   if c["gained"] == "member" and not hands_over(c["member"], c["paths"])}
    names = set(new[fix["path"]]["names"])
    if kind == "forward" and any(c in names and m == fix["member"] for c, m in implemented if c != fix["class"]):
        kind = "chain"
    return {**out, "kind": kind, "upstream_attr_paths": fix["paths"]}


def site_reader(root: Path) -> Callable[[str, int], str]:
    """``(path, line)`` → that line of the release, stripped (path relative to the package, line 1-based)."""
    lines: dict[str, list[str]] = {}

    def line_of(path: str, line: int) -> str:
        if path not in lines:
            try:
                lines[path] = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines[path] = []
        return lines[path][line - 1].strip() if 0 < line <= len(lines[path]) else ""
    return line_of
