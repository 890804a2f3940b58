"""The ``data`` the server attaches to its diagnostics and code actions, as typed classes.

Clients keep ``data`` opaque and send it back: a diagnostic's in ``codeAction``'s ``context.diagnostics``, a code
action's in ``codeAction/resolve``. On the way out these classes are unstructured by the protocol's converter
(field names in camelCase, as LSP names its own fields); what comes back is a plain JSON object again, read
with :meth:`DiagnosticData.from_wire` and :meth:`CodeActionData.from_wire`, which say None for data that
another server (or a broken client) made.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from pygls.protocol import default_converter

Action = Literal["delegate", "delegateAll", "fixAll", "declare", "ignore"]
FindingKey = tuple[str, str, str]  # (code, class qualname, member): a finding across analyses


@attrs.frozen(kw_only=True)
class DiagnosticData:
    """Which finding a diagnostic shows: the key quick fixes use to find it again in a newer analysis."""

    code: str
    class_qualname: str
    class_name: str | None = None
    member: str
    delegate: str | None = None

    @property
    def key(self) -> FindingKey:
        return (self.code, self.class_qualname, self.member)

    @classmethod
    def from_wire(cls, data: Any, converter: cattrs.Converter) -> DiagnosticData | None:
        """The data of a diagnostic the client sent back; None when it is not one of ours."""
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            return None
        try:
            return converter.structure(data, cls)
        except (cattrs.BaseValidationError, TypeError, ValueError):
            return None


@attrs.frozen
class CodeActionData:
    """What a lazily resolved code action does: its document, the action and the findings it fixes."""

    uri: str
    action: Action
    findings: list[tuple[str, ...]]

    @classmethod
    def from_wire(cls, data: Any, converter: cattrs.Converter) -> CodeActionData | None:
        """The data of a code action to resolve; None when spec-contract did not make it."""
        if not (isinstance(data, dict) and isinstance(data.get("uri"), str) and isinstance(data.get("findings"), list)):
            return None
        try:
            return converter.structure(data, cls)
        except (cattrs.BaseValidationError, TypeError, ValueError):
            return None


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def converter_factory() -> cattrs.Converter:
    """pygls's converter, plus camelCase hooks for this module's classes (the server is built with it)."""
    converter = default_converter()
    for cls in (DiagnosticData, CodeActionData):
        names: dict[str, Any] = {a.name: override(rename=_camel(a.name)) for a in attrs.fields(cls)}
        converter.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, converter, **names))
        converter.register_structure_hook(cls, make_dict_structure_fn(cls, converter, **names))
    return converter
