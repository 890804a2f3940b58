"""Edit storm: hundreds of incremental edits to a buffer full of awkward characters, then the real server's
diagnostics must equal a cold ``spec-contract check`` of the same text.

The buffer holds characters ``str.splitlines`` breaks lines at and Python does not (a form feed, ``\\x0b``,
``\\x1c``-``\\x1e``, ``\\x85``, U+2028/U+2029) and characters outside the BMP (two UTF-16 units each), so
every edit's position is wrong by a line or a column if the server's copy of the buffer splits lines or
counts columns differently from the editor. The editors here are VS Code (UTF-16 positions, pull
diagnostics, resolved code actions) and Emacs (UTF-32, pushed diagnostics, eager code-action edits); the
editor's copy of the text is kept by this test, which counts lines as the LSP does (``\\r\\n``, ``\\r``,
``\\n``). Code actions and hovers asked while a forward is half typed must
be answered (an empty list at worst), and the server must log no traceback.
"""

from __future__ import annotations

import ast
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lsp"))
from lsp_harness import diagnostics_now, initialize, is_pull, make_client, open_document, settle, wait_for_diagnostics  # noqa: E402

DEMO = REPO / "examples" / "demo"
LLAVA = Path("minisgl") / "models" / "llava.py"
SERVER_COMMAND = [sys.executable, "-m", "spec_contract", "serve", "--stdio"]
LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
AWKWARD = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "🚀", "𝔘", "é", "模", "a", " "]
FORWARD = "\n    def get_embed_and_head(self):\n        return self.language_model.get_embed_and_head()\n"
EDITS = 300


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in the position encoding's units."""
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-8")) if encoding == "utf-8" else len(text.encode("utf-16-le")) // 2


class Buffer:
    """The editor's side: the text, and LSP positions (in the negotiated units) computed from it."""

    def __init__(self, client: LanguageClient, uri: str, text: str) -> None:
        self.client, self.uri, self.text, self.version, self.edits = client, uri, text, 1, 0
        self.asked_half_typed = 0
        encoding = client.init_result.capabilities.position_encoding
        self.encoding = str(getattr(encoding, "value", encoding))

    def position(self, offset: int) -> types.Position:
        line_start = 0
        lines = LINE.findall(self.text)
        for number, line in enumerate(lines):
            end = line_start + len(line)
            if offset < end or (offset == end and not line.endswith(("\n", "\r"))):  # the last, unended line
                return types.Position(number, units(self.text[line_start:offset], self.encoding))
            line_start = end
        return types.Position(len(lines), 0)

    def replace(self, start: int, end: int, new_text: str) -> None:
        """One incremental change, sent as the editor would send it."""
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=self.position(start), end=self.position(end)), text=new_text
        )
        self.text = self.text[:start] + new_text + self.text[end:]
        self.version += 1
        self.edits += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[change],
            )
        )

    def line_starts(self) -> list[int]:
        starts, at = [], 0
        for line in LINE.findall(self.text):
            starts.append(at)
            at += len(line)
        return starts


def end_of_class(text: str) -> int:
    """Just after the wrapper's last statement (edits below only add whole lines, never split this one)."""
    last = "return self.language_model.set_embed_and_head(embed, head)\n"
    return text.index(last) + len(last)


def awkward_start(text: str) -> str:
    """The demo's wrapper with a form feed on line 1 and awkward characters in comments and strings."""
    text = "\x0c\n" + text.replace("\n\n\nclass Llava", "\n# \x0b\x1c\u2028 🚀\n\x0c\n\nclass Llava")
    return text.replace(
        "    def forward(self, batch):\n",
        "    def forward(self, batch):  # \x85\u2029𝔘\n        note = '\x1d\x1e\u2028🚀'\n",
    )


def cold_findings(tmp: Path, text: str, encoding: str) -> list[tuple]:
    """What ``spec-contract check`` says about the buffer's text saved in a fresh copy of the demo, in the
    editor's units: (code, member, start line, start column, end line, end column)."""
    root = tmp / "cold"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", ".spec-contract-cache"))
    (root / LLAVA).write_text(text, encoding="utf-8", newline="")
    result = subprocess.run([sys.executable, "-m", "spec_contract", "check", ".", "--format", "json", "--no-cache"],
                            cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode in (0, 1), result.stderr
    lines = LINE.findall(text)

    def column(line: int, column: int) -> int:
        return units(lines[line][:column], encoding)

    return sorted(
        (f["code"], f["method"], f["line"] - 1, column(f["line"] - 1, f["column"] - 1),
         f["end_line"] - 1, column(f["end_line"] - 1, f["end_column"] - 1))
        for f in json.loads(result.stdout)["findings"] if f["path"] == LLAVA.as_posix()
    )


def _keyed(diagnostics: list[types.Diagnostic]) -> list[tuple]:
    return sorted((d.code, d.data["member"], d.range.start.line, d.range.start.character, d.range.end.line,
                   d.range.end.character) for d in diagnostics)


async def server_findings(client: LanguageClient, uri: str) -> list[tuple]:
    return _keyed(await diagnostics_now(client, uri))


async def findings_becoming(client: LanguageClient, uri: str, expected: list[tuple]) -> list[tuple]:
    """The server's findings once they are ``expected`` (pulled, or published: a push client waits for them,
    with a generous limit, as a loaded machine may publish after answering the request that settles), else
    what it last said."""
    if is_pull(client):
        return await server_findings(client, uri)
    await settle(client, uri)
    try:
        await wait_for_diagnostics(client, uri, lambda d: _keyed(d) == expected, "the cold check's findings")
    except AssertionError:
        pass  # the comparison that follows says what differs
    return _keyed(list(client.diagnostics.get(uri, [])))


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


async def ask_while_typing(client: LanguageClient, buffer: Buffer) -> None:
    """Diagnostics, code actions, a hover and implementations on the class line, as an editor asks while
    the user types (counted in ``buffer.asked_half_typed`` when the buffer does not parse)."""
    buffer.asked_half_typed += not parses(buffer.text)
    line = next(i for i, text in enumerate(LINE.findall(buffer.text)) if text.startswith("class Llava"))
    document = types.TextDocumentIdentifier(uri=buffer.uri)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=document,
            range=types.Range(start=types.Position(line, 6), end=types.Position(line, 6)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    for action in actions or []:
        if action.edit is None:
            await client.code_action_resolve_async(action)
    position = types.Position(line, 8)
    await client.text_document_hover_async(types.HoverParams(text_document=document, position=position))
    await client.text_document_implementation_async(
        types.ImplementationParams(text_document=document, position=position)
    )
    await diagnostics_now(client, buffer.uri)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client),
    params=["vscode-1.139.1", "emacs-29.1"],
)
async def editor(lsp_client: LanguageClient, request):
    lsp_client.editor = request.param
    lsp_client.init_result = None
    yield lsp_client
    if lsp_client.init_result is not None:
        await lsp_client.shutdown_session()


async def start(client: LanguageClient, tmp_path: Path) -> Buffer:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", ".spec-contract-cache"))
    text = awkward_start((root / LLAVA).read_text())
    (root / LLAVA).write_text(text, encoding="utf-8", newline="")
    await initialize(client, [root])
    return Buffer(client, open_document(client, root / LLAVA, text), text)


async def test_a_forward_pasted_below_a_form_feed_lands_where_the_editor_put_it(editor, tmp_path):
    buffer = await start(editor, tmp_path)
    before = await server_findings(editor, buffer.uri)
    assert [f[1] for f in before] == ["get_embed_and_head", "set_eagle3_layers_to_capture"]
    at = end_of_class(buffer.text)
    buffer.replace(at, at, FORWARD)
    cold = cold_findings(tmp_path, buffer.text, buffer.encoding)
    after = await findings_becoming(editor, buffer.uri, cold)
    assert after == cold
    assert [f[1] for f in after] == ["set_eagle3_layers_to_capture"]


async def test_edit_storm_ends_with_the_diagnostics_of_a_cold_check(editor, tmp_path):
    rng = random.Random(14)
    buffer = await start(editor, tmp_path)
    await server_findings(editor, buffer.uri)
    typed = False
    while buffer.edits < EDITS:
        roll = rng.random()
        if roll < 0.25 and not typed:
            # Type the forward at the end of the class, a few characters at a time, asking for code actions
            # and hovers on the way (the buffer does not parse until the forward is complete).
            at = end_of_class(buffer.text)
            typed_text = FORWARD
            while typed_text:
                size = rng.randint(1, 6)
                chunk, typed_text = typed_text[:size], typed_text[size:]
                buffer.replace(at, at, chunk)
                at += len(chunk)
                if rng.random() < 0.3:
                    await ask_while_typing(editor, buffer)
            typed = True
        elif roll < 0.35 and typed and FORWARD in buffer.text:
            at = buffer.text.index(FORWARD)
            buffer.replace(at, at + len(FORWARD), "")
            typed = False
        elif roll < 0.7:
            # A comment line of awkward characters at the start of a random line (valid anywhere).
            starts = buffer.line_starts()
            at = starts[rng.randrange(len(starts))]
            comment = "# " + "".join(rng.choice(AWKWARD) for _ in range(rng.randint(1, 8))) + "\n"
            buffer.replace(at, at, "\x0c\n" if rng.random() < 0.2 else comment)
        elif roll < 0.9:
            # Change one character in the middle of one of those comments (columns past astral characters).
            comments = [m.start() for m in re.finditer(r"(?m)^# ", buffer.text)]
            if comments:
                at = rng.choice(comments) + 2
                if buffer.text[at] not in "\r\n":
                    buffer.replace(at, at + 1, rng.choice(AWKWARD))
        else:
            # Remove one of those comment lines, or a form-feed line.
            lines = [m for m in re.finditer(r"(?m)^(?:# [^\r\n]*|\x0c)\n", buffer.text)]
            if lines:
                line = rng.choice(lines)
                buffer.replace(line.start(), line.end(), "")
        if rng.random() < 0.05:
            await ask_while_typing(editor, buffer)

    ast.parse(buffer.text)  # every operation above ends in text that parses
    print(f"{buffer.edits} edits, {buffer.asked_half_typed} rounds of requests on a buffer that did not parse")
    assert buffer.asked_half_typed >= 20
    cold = cold_findings(tmp_path, buffer.text, buffer.encoding)
    assert await findings_becoming(editor, buffer.uri, cold) == cold
    tracebacks = [m.message for m in editor.log_messages if "Traceback" in m.message]
    assert tracebacks == []
