"""Whether the EAGLE-3 decoder capture (:mod:`spec_contract.engine.check.capture`) applies to a class, read
through the index: the class and its decoder parsed alone from their files' text (memoised per class), and
the value recorded per layer taken from decoders that capture already."""

from __future__ import annotations

import ast
from collections.abc import Callable

from spec_contract.engine.check import capture as capturing
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.results import Capture


class Captures:
    """The decoder captures of one analysis (``text`` reads a file as the analysis does)."""

    def __init__(self, index: Index, text: Callable[[str], str | None]) -> None:
        self._index = index
        self._text = text
        self._nodes: dict[ClassKey, ast.ClassDef | str] = {}  # a class parsed alone, or why it cannot be
        self._records: dict[ClassKey, list[ast.expr]] = {}
        # ("model", class, decoder attribute) or ("decoder", decoder, expression) → why that part of the change
        # does not apply (None: it does); memoised: each capture body (EAGLE-3's, DSpark's) asks the same class
        self._declined: dict[tuple[str, ClassKey, str], str | None] = {}

    def capture(self, key: ClassKey, delegate: str, models: list[tuple[ClassKey, str]]) -> Capture:
        """The decoder capture for the class (see :mod:`spec_contract.engine.check.capture`), with the value
        recorded per layer taken from the decoders that capture of ``models`` (each with the attribute that
        holds its decoder); or :class:`capture.Declined`."""
        index = self._index
        owners = index.delegates(key).get(delegate, ())
        if len(owners) != 1:
            raise capturing.Declined(f"`self.{delegate}` is not one known decoder class")
        decoder = owners[0]
        mine = self._node(key)
        path = index.path_of(key.module)
        text = self._text(path) if path else None
        decoder_path = index.path_of(decoder.module)
        decoder_text = self._text(decoder_path) if decoder_path else None
        assert text is not None  # _node read it
        if decoder_text is None or decoder_path is None:
            raise capturing.Declined(f"`{_short(decoder)}` is not in a file read here")
        self._applies(("model", key, delegate), lambda: capturing.model_plan(text, mine, delegate))
        if index.provision(decoder, "layers_to_capture") is not None:  # it captures: only the class's part
            return Capture(delegate, decoder.qualname, decoder_path, decoder.dotted, "")
        node = self._node(decoder)  # only now: a decoder that captures already is not parsed
        recorded = ((expr, owner) for model, attr in models for owner in index.delegates(model).get(attr, ())
                    for expr in self._recorded(owner))  # lazily: a decoder is parsed only when asked
        expression, like = capturing.fitting_expression(node, recorded)
        self._applies(("decoder", decoder, expression), lambda: capturing.decoder_plan(decoder_text, node, expression))
        return Capture(delegate, decoder.qualname, decoder_path, like.dotted if like else "", expression)

    def _applies(self, part: tuple[str, ClassKey, str], plan: Callable[[], object]) -> None:
        """Whether that part of the change applies (``plan`` runs the first time it is asked); else
        :class:`capture.Declined`, as ``plan`` raised it."""
        if part not in self._declined:
            try:
                plan()
                self._declined[part] = None
            except capturing.Declined as why:
                self._declined[part] = str(why)
        declined = self._declined[part]
        if declined is not None:
            raise capturing.Declined(declined)

    def parsed(self, key: ClassKey) -> ast.ClassDef:
        """The class's ``__init__`` and ``forward``, parsed alone (memoised); an empty class when they cannot be."""
        return self._node(key, strict=False)

    def _recorded(self, key: ClassKey) -> list[ast.expr]:
        """What the decoder ``key`` records per captured layer (memoised: every class asks the same few)."""
        found = self._records.get(key)
        if found is None:
            found = self._records[key] = capturing.recorded(self._node(key, strict=False))
        return found

    def _node(self, key: ClassKey, strict: bool = True) -> ast.ClassDef:
        """The class parsed alone (memoised); when it cannot be, :class:`capture.Declined` (or, not
        ``strict``, an empty class)."""
        found = self._nodes.get(key)
        if found is None:
            path = self._index.path_of(key.module)
            text = self._text(path) if path else None
            cls = self._index.class_summary(key)
            try:
                if text is None or cls is None or "." in key.qualname:
                    raise capturing.Declined(f"`{_short(key)}` is not a top-level class of a file read here")
                defs: dict[str, list[int]] = {}
                for member in cls.members:
                    if member.name in ("__init__", "forward") and member.kind == "method":
                        defs.setdefault(member.name, []).append(member.span.line)
                found = capturing.class_methods(text, _short(key), defs)
            except capturing.Declined as why:
                found = str(why)
            self._nodes[key] = found
        if isinstance(found, str):
            if strict:
                raise capturing.Declined(found)
            return ast.ClassDef(name=key.qualname, bases=[], keywords=[], body=[], decorator_list=[])
        return found


def _short(key: ClassKey) -> str:
    return key.qualname.rsplit(".", 1)[-1]
