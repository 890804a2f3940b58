"""``workspace/executeCommand`` commands: what editors' own views ask the server for.

``spec-contract.contract`` returns the derived contract of every workspace folder, for the VS Code
extension's contract view (role → member → clickable call sites). Positions are LSP positions in the
negotiated encoding, so a client can open a call site without converting anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.workspace import PositionCodec

from spec_contract.lsp.convert import SourceLines, to_range, uri_of

if TYPE_CHECKING:
    from spec_contract.engine import Analysis

CONTRACT = "spec-contract.contract"


def contract_payload(folders: list[tuple[str, Analysis]], codec: PositionCodec) -> dict[str, Any]:
    """``{"folders": [{"root", "contract": [{"role", "member", "required", "call_sites": [...]}]}]}``."""
    out = []
    for root_uri, analysis in folders:
        lines = SourceLines(analysis)
        entries = []
        for entry in analysis.contract.entries:
            sites = []
            for site in entry.call_sites:
                start = to_range(site.span, lines(site.path), codec).start
                sites.append({"uri": uri_of(site.path), "line": start.line, "character": start.character,
                              "text": site.text, "guarded": site.guarded})
            entries.append({"role": entry.role, "member": entry.member, "required": entry.required,
                            "call_sites": sites})
        out.append({"root": root_uri, "contract": entries})
    return {"folders": out}
