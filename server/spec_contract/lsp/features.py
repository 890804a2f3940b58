"""What the client can do, resolved once from its ``initialize`` capabilities.

Every decision that depends on the client reads one field here, instead of walking the capability tree by
string path where it is needed; the session keeps the instance (all false until ``initialize``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability


@dataclass(frozen=True)
class ClientFeatures:
    """The client capabilities the server acts on."""

    # Pull diagnostics only when the client can also be told to re-pull: this server's findings change when
    # *other* files change, and a pull client without refresh would keep stale diagnostics.
    pull_diagnostics: bool = False
    diagnostic_refresh: bool = False  # workspace/diagnostic/refresh
    related_information: bool = False  # in the diagnostics of the model in use (pull or push)
    configuration: bool = False  # workspace/configuration
    watched_files_registration: bool = False  # dynamic registration of didChangeWatchedFiles
    work_done_progress: bool = False
    resolves_edits: bool = False  # codeAction/resolve fills in ``edit``
    disabled_actions: bool = False  # a code action may be listed as disabled, with the reason shown
    document_changes: bool = False  # versioned ``documentChanges`` in a WorkspaceEdit
    markdown_hover: bool = True
    # Places in a Markdown hover as links (``[`path:12`](file:///…#L12)``), which VS Code and Emacs (markdown-mode)
    # follow. Not for Neovim: it follows none, 0.7 prints the link's whole URI and 0.11 conceals it but wraps the
    # float as if it were there (a place broke across lines); its users open a plain ``path:12`` with `gF`. (A
    # plain-text hover, Eglot's without markdown-mode, has no links either.)
    hover_links: bool = True

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities, client: types.ClientInfo | None = None) -> ClientFeatures:
        def cap(field: str, default: Any = None) -> Any:
            return get_capability(capabilities, field, default)

        refresh = bool(cap("workspace.diagnostics.refresh_support", False))
        pull = bool(cap("text_document.diagnostic")) and refresh
        related = cap(
            "text_document.diagnostic.related_information"
            if pull
            else "text_document.publish_diagnostics.related_information",
            False,
        )
        properties = cap("text_document.code_action.resolve_support.properties", []) or []
        formats = cap("text_document.hover.content_format", None) or [types.MarkupKind.Markdown]  # none: the default
        return cls(
            pull_diagnostics=pull,
            diagnostic_refresh=refresh,
            related_information=bool(related),
            configuration=bool(cap("workspace.configuration", False)),
            watched_files_registration=bool(cap("workspace.did_change_watched_files.dynamic_registration", False)),
            work_done_progress=bool(cap("window.work_done_progress", False)),
            resolves_edits="edit" in properties,
            disabled_actions=bool(cap("text_document.code_action.disabled_support", False)),
            document_changes=bool(cap("workspace.workspace_edit.document_changes", False)),
            markdown_hover=types.MarkupKind.Markdown in formats,
            hover_links=client is None or client.name != "Neovim",
        )
