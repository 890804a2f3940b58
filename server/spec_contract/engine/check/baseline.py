"""A baseline: the findings a team accepted when it switched the tool on, so only new ones fail a run.

A finding's identity is what survives line moves and unrelated edits: its code, the class's qualified name,
the member and the role (never a line, a column or a message). The file is JSON with one entry per line,
sorted, so a re-written baseline diffs as the findings that came and went. Entries the run no longer finds
are *stale* (fixed since): reported, never an error. A file that cannot be used (missing, empty, another
version, malformed) is a :class:`~spec_contract.engine.config.ConfigError` with a one-line message: a
baseline that silently matched nothing would pass every old finding as new, or hide every new one.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec_contract.engine.config import ConfigError, read_settings_file
from spec_contract.engine.digests import sha256
from spec_contract.engine.results import Finding
from spec_contract.engine.written import replace, target_of

VERSION = 1
_KEYS = ("code", "class", "member", "role")


def identity(finding: Finding) -> tuple[str, str, str, str]:
    return finding.code, finding.class_qualname, finding.member, finding.role


def fingerprint(finding: Finding) -> str:
    """The identity as a short stable hash: JSON's ``fingerprint`` and SARIF's ``partialFingerprints``."""
    return sha256("\0".join(identity(finding)).encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class Entry:
    code: str
    class_qualname: str
    member: str
    role: str
    path: str  # where the class was, relative to the project root: for readers and for subset runs

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return self.code, self.class_qualname, self.member, self.role


@dataclass(frozen=True)
class Match:
    baselined: frozenset[str]  # fingerprints of the findings the baseline covers
    stale: tuple[Entry, ...]  # entries no finding matched: fixed since the baseline was written


@dataclass(frozen=True)
class Baseline:
    path: Path
    entries: tuple[Entry, ...]

    def match(self, findings: Iterable[Finding], covers: Callable[[str], bool] = lambda rel: True) -> Match:
        """Which findings the baseline covers, and which of its entries (among those whose path ``covers``
        accepts: a run over a subset cannot tell about the rest) matched none. An entry covers one finding,
        so a second finding with the same identity (a class defined twice) is new."""
        left = Counter(entry.identity for entry in self.entries)
        baselined = set()
        for finding in findings:
            key = identity(finding)
            if left[key] > 0:
                left[key] -= 1
                baselined.add(fingerprint(finding))
        stale = []
        for entry in self.entries:
            if left[entry.identity] > 0 and covers(entry.path):
                left[entry.identity] -= 1
                stale.append(entry)
        return Match(frozenset(baselined), tuple(stale))


def _parsed(path: Path, data_bytes: bytes) -> dict[str, Any]:
    """The JSON object of a baseline file's bytes (a UTF-8 BOM, as some editors save, is skipped)."""
    try:
        text = data_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"baseline {path}: cannot read it (not UTF-8, byte {exc.start})") from None
    if not text.strip():
        raise ConfigError(f"baseline {path}: the file is empty")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"baseline {path}: not JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict) or "version" not in data:
        raise ConfigError(f"baseline {path}: not a spec-contract baseline (no 'version')")
    return data


def _entries(path: Path, data: dict[str, Any]) -> tuple[Entry, ...]:
    version = data["version"]
    if type(version) is not int or version != VERSION:  # ``true == 1`` in Python: a bool is no version
        raise ConfigError(f"baseline {path}: version {version!r} is not supported (this spec-contract "
                          f"reads version {VERSION}); write it again with check --write-baseline")
    raw = data.get("findings")
    if not isinstance(raw, list):
        raise ConfigError(f"baseline {path}: 'findings' must be a list")
    entries = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in _KEYS):
            raise ConfigError(f"baseline {path}: findings[{i}] needs string values for {', '.join(_KEYS)}")
        entries.append(Entry(item["code"], item["class"], item["member"], item["role"], str(item.get("path", ""))))
    return tuple(entries)


def load(path: Path) -> Baseline:
    """Read a baseline file; every way it can be unusable is a one-line ConfigError naming the file."""
    try:
        data = read_settings_file(path, "baseline")
    except ConfigError as exc:
        if not os.path.lexists(path):
            raise ConfigError(f"baseline {path}: no such file (write one with check --write-baseline {path})") \
                from None
        raise exc from None
    return Baseline(path, _entries(path, _parsed(path, data)))


def render(findings: Iterable[Finding], relative: Callable[[str], str], kept: Iterable[Entry] = ()) -> str:
    """The file's text: sorted entries, one per line, so that re-writing it diffs well."""
    rows = sorted([(relative(f.path), f.class_qualname, f.member, f.role, f.code) for f in findings]
                  + [(e.path, e.class_qualname, e.member, e.role, e.code) for e in kept])
    lines = [json.dumps({"code": code, "class": cls, "member": member, "role": role, "path": rel})
             for rel, cls, member, role, code in rows]
    body = ",\n  ".join(lines)
    return (f'{{\n "version": {VERSION},\n "tool": "spec-contract",\n'
            f' "findings": [{chr(10) + "  " + body + chr(10) + " " if lines else ""}]\n}}\n')


def _previous(path: Path, exists: bool) -> tuple[Entry, ...]:
    """The entries of the baseline at ``path`` (an empty file or another version: none), or a one-line
    ConfigError when the file there is something else (a model file, a pyproject): it is not replaced."""
    if not exists:
        return ()
    data_bytes = read_settings_file(path, "baseline")
    if not data_bytes.strip():
        return ()
    try:
        data = _parsed(path, data_bytes)
        if data.get("tool", "spec-contract") != "spec-contract" or not isinstance(data.get("findings"), list):
            raise ConfigError(f"baseline {path}: not a spec-contract baseline")
    except ConfigError as exc:
        why = str(exc).removeprefix(f"baseline {path}: ").removeprefix("not a spec-contract baseline").strip()
        raise ConfigError(f"baseline {path}: not a spec-contract baseline{f' ({why})' if why else ''}; "
                          "refusing to replace it (name a new file, or remove this one)") from None
    try:
        return _entries(path, data)
    except ConfigError:
        return ()  # another version: written again, as its message says


def write(path: Path, findings: Iterable[Finding], relative: Callable[[str], str],
          checked: Callable[[Entry], bool] = lambda entry: True) -> int:
    """Write the baseline of ``findings``, keeping the entries of the file already there that this run did
    not check (``checked`` is False: outside the given paths, a code not selected); returns how many were
    kept. Only a regular file, or none, is replaced, and only a baseline; atomically (see
    :mod:`~spec_contract.engine.written`).
    """
    # a worker line's classes too, each at its own line: what a later run over their files alone reports
    findings = [record for finding in findings for record in (finding, *finding.records)]
    target, mode = target_of(path, "baseline")
    found = {identity(finding) for finding in findings}  # reported, so checked, wherever the class is
    kept = tuple(entry for entry in _previous(target, mode is not None)
                 if not checked(entry) and entry.identity not in found)
    replace(target, render(findings, relative, kept), mode, "baseline", path)
    return len(kept)
