"""``check --fix`` and ``check --diff``: which findings a fix answers, the edits written safely (or shown as a
unified diff instead), and, per class, each member added and why.

``--fix`` fixes what makes the check fail (error-level findings the baseline does not cover); the user asks
for more by code (``--select``). A class the engine declines and a file that cannot be written are each
one ``not fixed: PATH: why`` line on standard error, and never stop the others.
"""

from __future__ import annotations

import difflib
import io
import os
import stat
import sys
import tokenize
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from spec_contract.engine import Added, Analysis, Finding, TextEdit
    from spec_contract.report import Report


class Refused(Exception):
    """A file ``--fix`` leaves as it was; the message says why, in one line."""


class Fixable(Protocol):
    """A project seen through the given PATHs (the CLI's subset): what to fix, and what to read again."""

    def analyze(self) -> Analysis: ...

    def invalidate(self, path: str) -> None: ...


@dataclass
class Outcome:
    """What a fix run did: files written (or, for a diff, that would change), classes or files left
    unfixed, the per-class lines and the diff."""

    files: int = 0
    members: int = 0
    classes: int = 0
    refused: int = 0
    unasked: list[str] = field(default_factory=list)  # codes of findings a forward would fix, not asked for
    chosen: set[str] = field(default_factory=set)  # codes of the findings the run was asked to fix
    lines: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)


def wanted(findings: Iterable[Finding], asked: frozenset[str], baselined: Callable[[Finding], bool]) -> list[Finding]:
    """The findings ``--fix`` answers: those that fail the check (error level, not baselined), and every
    finding of a code the user named."""
    from spec_contract.engine import Severity

    return [f for f in findings if f.code in asked or (f.severity == Severity.ERROR and not baselined(f))]


def run(projects: Sequence[Fixable], asked: frozenset[str], baselined: Callable[[Finding], bool],
        report_of: Callable[[Analysis], Report], write: bool) -> Outcome:
    """Fix (``write``) or diff every project's wanted findings."""
    from spec_contract.engine import BY_CODE, apply_edits, delegation_edits
    from spec_contract.report import printable
    from spec_contract.report.text import added_lines

    outcome = Outcome()
    for project in projects:
        analysis = project.analyze()
        report = report_of(analysis)
        chosen = wanted(analysis.findings, asked, baselined)
        taken = {id(f) for f in chosen}
        outcome.chosen |= {f.code for f in chosen}
        outcome.unasked += [f.code for f in analysis.findings
                            if id(f) not in taken and BY_CODE[f.code].forwards and not baselined(f)]
        fixes = delegation_edits(analysis, chosen)
        for refusal in fixes.refused:
            say_refused(report.shown(refusal.path), str(refusal))
        outcome.refused += len(fixes.refused)
        by_path: dict[str, list[TextEdit]] = {}
        for edit in fixes.edits:
            by_path.setdefault(edit.path, []).append(edit)
        added: dict[str, list[Added]] = {}
        for one in fixes.added:
            added.setdefault(one.path, []).append(one)
        for path, file_edits in by_path.items():
            source = analysis.source(path)
            if source is None:
                continue
            text = apply_edits(source, file_edits)
            if write:
                try:
                    write_file(path, source, text)
                except Refused as exc:
                    say_refused(report.shown(path), str(exc))
                    outcome.refused += 1
                    continue
                project.invalidate(path)
            else:
                shown = printable(report.shown(path))
                outcome.diff += _diff(source, text, shown)
            outcome.files += 1
            members = added.get(path, [])
            outcome.members += len(members)
            outcome.classes += len({a.class_name for a in members})
            outcome.lines += added_lines(report, members, done=write)
    return outcome


def _diff(source: str, text: str, name: str) -> list[str]:
    """A unified diff of the file, as ``patch`` reads it (a last line without a line break is marked)."""
    lines = difflib.unified_diff(_patch_lines(source), _patch_lines(text), fromfile=name, tofile=name)
    return [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]


def _patch_lines(text: str) -> list[str]:
    """The lines as ``diff`` and ``patch`` read a file: each ends after a ``\\n``. A form feed or a lone ``\\r``
    is inside a line (a file whose lines end in ``\\r`` is one line, as ``diff -u`` gives it): a diff cut
    anywhere else names lines ``patch`` does not find."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def summary(outcome: Outcome, write: bool) -> str:
    """The fix run in one line, and what it left for the user to ask for."""
    s = "" if outcome.files == 1 else "s"
    if outcome.files:
        verb = "Fixed" if write else "Would fix"
        add = "added" if write else "add"
        line = (f"{verb} {outcome.files} file{s}: {add} {outcome.members} member{'' if outcome.members == 1 else 's'} "
                f"to {outcome.classes} class{'' if outcome.classes == 1 else 'es'}.")
    elif outcome.refused:
        line = f"{'Fixed' if write else 'Would fix'} nothing: every fix asked for was declined (see above)."
    else:
        line = "Nothing to fix: no finding that fails the check has a forward to add."
    if outcome.unasked:
        n, codes = len(outcome.unasked), ",".join(sorted(outcome.chosen | set(outcome.unasked)))
        line += f" {n} other finding{'' if n == 1 else 's'} (below error level) can be fixed too: --select {codes}."
    return line


def say_refused(path: str, why: str) -> None:
    from spec_contract.report import printable

    print(f"spec-contract: error: not fixed: {printable(path)}: {printable(why)}", file=sys.stderr)


def write_file(path: str, source: str, text: str) -> None:
    """Replace the file's text ``source`` (as the analysis read it) by ``text``, or refuse.

    The new text is encoded as the file is (its PEP 263 cookie, its UTF-8 BOM kept), must still parse in
    that encoding, and may only add lines; the file must still hold ``source`` and be writable by its
    owner. It is written to a temporary file beside it (with the file's permissions) and moved over it, so
    a failure leaves the file as it was and no temporary file behind.
    """
    import ast
    import tempfile

    from spec_contract.engine import decode, only_adds_lines, read_bytes

    if not only_adds_lines(source, text):
        raise Refused("the fix would change or remove existing lines")
    path = os.path.realpath(path)  # a symlinked file is written where it lives; the link stays a link
    data = read_bytes(path)  # a regular file only, opened without blocking: a FIFO there now is refused
    try:
        status = os.stat(path)
    except OSError as exc:
        raise Refused(f"cannot read it: {exc.strerror or exc}") from None
    if isinstance(data, str):
        raise Refused(f"cannot read it: {'not a regular file' if data == 'not-a-file' else data}")
    if decode(data).text != source:
        raise Refused("it changed on disk during the check")
    if not status.st_mode & stat.S_IWUSR:
        raise Refused("it is read-only")
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    try:
        encoded = text.encode(encoding)  # "utf-8-sig" writes the BOM the file had
    except UnicodeEncodeError as exc:
        raise Refused(f"the forwards hold characters its encoding ({encoding}) cannot store: {exc.reason}") from None
    try:
        ast.parse(encoded, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise Refused(f"the fixed file would not parse ({type(exc).__name__}: {getattr(exc, 'msg', exc)})") from None
    directory = os.path.dirname(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".spec-contract-", suffix=".tmp", dir=directory or ".")  # any name length
    except OSError as exc:
        raise Refused(f"cannot write beside it: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(encoded)
        os.chmod(tmp, stat.S_IMODE(status.st_mode))
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise Refused(f"cannot write it: {exc.strerror or exc}") from None
