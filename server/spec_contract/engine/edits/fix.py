"""Findings → text edits: forwarding stubs and suppression comments for wrapper classes.

The libcst stub generator (:mod:`spec_contract.engine.edits.stubs`) is imported only when an edit is asked for,
so neither the CLI's plain check nor the language server's start-up pays for libcst.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from spec_contract.engine.edits.refusals import LIBCST, UNREAD, Added, Fixes, Refusal, file_refusal
from spec_contract.engine.queries import Analysis
from spec_contract.engine.results import Finding, Forward, How, Span, TextEdit
from spec_contract.engine.rules import BY_CODE, MISSING_IMPLEMENTATION, Fix

if TYPE_CHECKING:
    from spec_contract.engine.edits.stubs import Delegation

_KIND = {"method": "method", "async_method": "async_method", "property": "property"}


class _Batch:
    """What the fixes of one batch of findings read: each file's text once (every class of a file, and every
    forward to the same inner model, asks for it), and each class by its name in its module (a nested class is
    ``Outer.W``: its finding's ``class_name`` is ``W``)."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self._texts: dict[str, str | None] = {}
        self._names = {key.dotted: key.qualname for key in (*analysis.checked, *analysis.held)}

    def source(self, path: str) -> str | None:
        if path not in self._texts:
            self._texts[path] = self.analysis.source(path)
        return self._texts[path]

    def name(self, finding: Finding) -> str:
        """The finding's class as its module names it."""
        return self._names.get(finding.class_qualname, finding.class_name)


def delegation_edits(analysis: Analysis, findings: Iterable[Finding]) -> Fixes:
    """One insertion per wrapper class, forwarding every member its findings name.

    A class the stub generator refuses gets no edit but a :class:`Refusal`; it never stops the edits of the
    other classes.
    """
    from spec_contract.engine.edits.stubs import Delegation, StubError, delegation_edit

    batch = _Batch(analysis)
    # A Protocol capability is declared in the class's bases: forwarding members never fixes it
    findings = _in_most_basic_class(analysis, [f for f in findings if BY_CODE[f.code].forwards])
    by_class: dict[tuple[str, str], list[tuple[Delegation, Finding]]] = {}
    for finding in findings:
        for (path, class_name), delegation in _delegations(batch, finding, Delegation):
            by_class.setdefault((path, class_name), []).append((delegation, finding))
    edits: list[TextEdit] = []
    refused: list[Refusal] = []
    added: list[Added] = []
    decoders: set[tuple[str, str]] = set()  # decoders made to capture already (two classes may share one)
    for (path, class_name), pairs in sorted(by_class.items()):
        source = batch.source(path)
        if source is None:
            refused.append(Refusal(path, class_name, UNREAD))
            continue
        try:
            captured = _capture_edits(batch, path, source, class_name, [d for d, _ in pairs], decoders)
            edit = delegation_edit(path, source, class_name, [d for d, _ in pairs])
        except StubError as err:
            refused.append(Refusal(path, class_name, str(err)))
            continue
        if edit is not None:
            edits += [edit, *captured]
            once: dict[str, tuple[Delegation, Finding]] = {}  # a member named twice is added once
            for delegation, why in pairs:
                once.setdefault(delegation.member, (delegation, why))
            added += [Added(path, class_name, d.member, d.delegate, why, d.like) for d, why in once.values()]
    return Fixes(tuple(edits), tuple(refused), tuple(added))


def _capture_edits(batch: _Batch, path: str, source: str, class_name: str, delegations: list[Delegation],
                   decoders: set[tuple[str, str]]) -> list[TextEdit]:
    """The rest of an EAGLE-3 implementation whose decoder does not capture yet (:mod:`check.capture`): the
    class's and its decoder's insertions, planned again on the text being edited. A shape the change does not
    apply to raises :class:`StubError` with the reason, so the member is not added alone (that would only move
    the crash)."""
    from spec_contract.engine.check import capture as capturing
    from spec_contract.engine.edits.stubs import StubError

    out: list[TextEdit] = []
    for capture in {d.capture for d in delegations if d.capture is not None}:
        try:
            cls = _top_class(capturing, source, class_name)
        except capturing.Declined as why:
            raise StubError(str(why)) from why
        own = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if not {d.member for d in delegations if d.capture == capture} - own:
            continue  # the member is there already: applying the fix twice adds nothing
        decoder_source = source if capture.decoder_path == path else batch.source(capture.decoder_path)
        if decoder_source is None:
            raise StubError(f"{UNREAD}: {capture.decoder_path}")
        try:
            plan = capturing.model_plan(source, cls, capture.delegate)
            decoder = (capture.decoder_path, capture.decoder)
            if capture.expression and decoder not in decoders:  # none: the decoder captures already
                out += [TextEdit(capture.decoder_path, Span(i.line, i.col, i.line, i.col), i.text)
                        for i in capturing.decoder_plan(decoder_source, _top_class(capturing, decoder_source,
                                                                                   capture.decoder),
                                                        capture.expression)]
                decoders.add(decoder)
        except capturing.Declined as why:
            raise StubError(f"making `{capture.decoder}` capture aux hidden states does not apply: {why}") from why
        out += [TextEdit(path, Span(i.line, i.col, i.line, i.col), i.text) for i in plan]
    return out


def _top_class(capturing: Any, source: str, name: str) -> Any:
    """The top-level class ``name`` of ``source``, parsed alone (:func:`check.capture.class_node`)."""
    matches = list(re.finditer(rf"^class {re.escape(name)}\b", source, re.MULTILINE))
    match = matches[-1] if matches else None  # the last definition: the one the runtime uses
    if match is None:
        raise capturing.Declined(f"`{name}` is not a top-level class of its file")
    return capturing.class_node(source, source.count("\n", 0, match.start()))


def _delegations(batch: _Batch, finding: Finding,
                 make: type[Delegation]) -> list[tuple[tuple[str, str], Delegation]]:
    """What one finding's fix adds, per (path, class name in its module): a forward of its member (a capability
    finding also forwards every member the algorithm needs past its gate); or, for an implement finding, each
    member's implementation modelled on another class, in this class or, for a chain, in its language model
    with a forward here. ``make`` is the stub generator's ``Delegation``."""
    if finding.classes:  # a worker line's classes (SC011): each implemented as its own finding would be
        return [pair for listed in finding.classes if listed.implements
                for pair in _delegations(batch, replace(finding, code=MISSING_IMPLEMENTATION.code, path=listed.path,
                                                        class_name=listed.class_name,
                                                        class_qualname=listed.class_qualname,
                                                        implements=listed.implements, classes=()), make)]
    here = (finding.path, batch.name(finding))
    if (BY_CODE[finding.code].fix is Fix.IMPLEMENT or finding.unfit) and not finding.implements:
        return []  # no model fits (nor a forward): the message says what is missing, nothing is guessed
    if not finding.implements:
        forwards: list[Finding | Forward] = [finding, *finding.also]
        return [(here, make(member=f.member, delegate=f.delegate, kind=_KIND.get(f.provider.kind, "attribute"),
                            inner_source=batch.source(f.provider.path), inner_line=f.provider.span.line))
                for f in forwards]
    out: list[tuple[tuple[str, str], Delegation]] = []
    for member, provision in finding.implements:
        implement = make(member=member, delegate="", kind="method", inner_source=None, inner_line=None,
                         body=provision.body, capture=provision.capture, like=provision.like)
        if provision.how is How.BOTH and provision.path and provision.in_class and provision.delegate:
            out.append(((provision.path, provision.in_class), implement))
            model = batch.source(provision.like_path) if provision.like_path else None
            out.append((here, make(member=member, delegate=provision.delegate, kind="method", inner_source=model,
                                   inner_line=provision.like_line)))
        else:
            out.append((here, implement))
    return out


def declaration_edits(analysis: Analysis, findings: Iterable[Finding]) -> Fixes:
    """For each capability the class does not declare (SC006): the Protocol added to its bases, and imported
    (the finding's provider is the Protocol class). One edit per file, however many classes it declares."""
    from spec_contract.engine.edits.declare import declare_protocol
    from spec_contract.engine.text import replacement

    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        if BY_CODE[finding.code].fix is Fix.DECLARE:
            by_path.setdefault(finding.path, []).append(finding)
    edits: list[TextEdit] = []
    refused: list[Refusal] = []
    for path, group in sorted(by_path.items()):
        source = analysis.source(path)
        why = UNREAD if source is None else file_refusal(source)
        if source is None or why is not None:
            refused += [Refusal(path, f.class_name, why or UNREAD) for f in group]
            continue
        text = source
        try:
            for finding in group:
                module, _, protocol = finding.provider.class_name.rpartition(".")
                text = declare_protocol(text, finding.class_name, module, protocol)
        except Exception as err:  # noqa: BLE001  libcst's own limits (see stubs._Wrapper)
            refused += [Refusal(path, f.class_name, f"{LIBCST} ({type(err).__name__})") for f in group]
            continue
        change = replacement(source, text)
        if change is not None:
            line, col, end_line, end_col, new_text = change
            edits.append(TextEdit(path, Span(line, col, end_line, end_col), new_text))
    return Fixes(tuple(edits), tuple(refused))


def declined(analysis: Analysis, findings: Iterable[Finding], declaring: bool = False) -> str | None:
    """Why the engine declines every class the fix of ``findings`` edits (its file is unread or does not parse,
    the class is nested too deeply, libcst cannot read it), known before any edit is made and worded as the
    edit's refusals would be (one ``Class: why`` per class); None when it edits one at least. ``declaring``:
    the fix declares a Protocol (libcst rewrites the whole file), else it adds members to each class.

    The language server asks this before it lists an action a client resolves later: an action that would
    resolve to no edit is not offered. Asked again on the same text, the answer is the one kept."""
    from spec_contract.engine.edits.stubs import Delegation, wrapper_file

    batch = _Batch(analysis)
    refused: dict[tuple[str, str], Refusal] = {}
    for finding in findings:
        targets = [(finding.path, finding.class_name)] if declaring else \
            [where for where, _ in _delegations(batch, finding, Delegation)]
        for path, name in targets:
            source = batch.source(path)
            why = UNREAD if source is None else file_refusal(source) if declaring else \
                wrapper_file(source).refusal(name)
            if why is None:
                return None
            refused.setdefault((path, name), Refusal(path, name, why))
    return "; ".join(str(refusal) for _, refusal in sorted(refused.items())) or None


def _in_most_basic_class(analysis: Analysis, findings: list[Finding]) -> list[Finding]:
    """The findings to fix, less those a base class's fix in the same batch already fixes: a registered
    subclass of a wrapper lacks what its base lacks, and inherits the forward once the base has it."""
    keys = {key.dotted: key for key in analysis.checked}
    wanted = {(f.class_qualname, f.member) for f in findings}
    kept = []
    for finding in findings:
        key = keys.get(finding.class_qualname)
        bases = analysis.index.mro(key)[1:] if key is not None else ()
        if not any((base.dotted, finding.member) in wanted for base in bases):
            kept.append(finding)
    return kept


def suppression_edit(analysis: Analysis, finding: Finding) -> Fixes:
    """``# spec-contract: ignore[CODE]`` above the finding's class."""
    from spec_contract.engine.edits.stubs import StubError
    from spec_contract.engine.edits.stubs import suppression_edit as edit

    source = analysis.source(finding.path)
    name = _Batch(analysis).name(finding)
    if source is None:
        return Fixes(refused=(Refusal(finding.path, name, UNREAD),))
    try:
        return Fixes((edit(finding.path, source, name, finding.code),))
    except StubError as err:
        return Fixes(refused=(Refusal(finding.path, name, str(err)),))
