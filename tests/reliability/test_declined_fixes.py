"""A fix the engine declines says why, in the CLI and in the editor (issue 26).

Three model files of our own nest code deeper than the stub generator walks, each in one of the shapes seen
in real model files: a long chain of string concatenations, a chain of binary operators, nested lambdas.
Their wrappers miss the forwards the demo's workers call, so a fix is asked for and must be declined:

- ``check --fix``: one ``not fixed: PATH: Class: why`` line per class, the file byte for byte as it was, a
  non-zero exit, and the demo's own wrapper still fixed;
- eager code actions: no forwarding action is offered; a client that shows disabled actions sees the reason
  on them, one that does not is told by ``window/showMessage`` (once, not on every request);
- lazily resolved code actions: the forwarding actions come disabled with the reason and nothing to resolve;
  when the refusal is known only at resolve time (the text became too deep after the list), the answer has
  no edit and a ``window/showMessage`` says why.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lsp"))
from lsp_harness import (  # noqa: E402
    CLIENTS,
    code_actions,
    diagnostics_now,
    initialize,
    make_client,
    open_document,
    replace_document,
    until,
)

DEMO = REPO / "examples" / "demo"
SERVER_COMMAND = [sys.executable, "-m", "spec_contract", "serve", "--stdio"]
WHY = "the class nests expressions deeper than 100 levels; it is left alone"


def wrapper(name: str, expression: str) -> str:
    """A wrapper that forwards only ``forward`` to its text model, with ``expression`` in a method of its own."""
    return (
        "from minisgl.models.llama import LlamaForCausalLM\n\n\n"
        f"class {name}:\n"
        "    def __init__(self, config):\n"
        "        self.language_model = LlamaForCausalLM(config)\n\n"
        "    def forward(self, batch):\n"
        "        return self.language_model.forward(batch)\n\n"
        "    def table(self):\n"
        f"        return {expression}\n\n\n"
        f"EntryClass = {name}\n"
    )


SHAPES = {  # file stem -> (class, its text)
    "deep_strings": ("StringChain", wrapper("StringChain", " + ".join(f"'part {i}'" for i in range(300)))),
    "deep_binops": ("OperatorChain", wrapper("OperatorChain", " | ".join(f"(1 << {i})" for i in range(300)))),
    "deep_lambdas": ("NestedLambdas", wrapper("NestedLambdas", "lambda: " * 120 + "0")),
}


def tree(tmp: Path) -> Path:
    root = tmp / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", ".spec-contract-cache"))
    for stem, (_, text) in SHAPES.items():
        (root / "minisgl" / "models" / f"{stem}.py").write_text(text)
    return root


def spec_contract(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spec_contract", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_the_shapes_parse_and_have_findings_to_fix(tmp_path):
    """Not vacuous: Python takes each file, and the check reports the wrappers' missing forwards."""
    root = tree(tmp_path)
    result = spec_contract("check", "--no-cache", cwd=root)
    assert result.returncode == 1, result.stderr
    for stem, (name, text) in SHAPES.items():
        compile(text, stem, "exec")
        assert re.search(rf"minisgl/models/{stem}\.py:\d+:\d+: .*SC001 .*`{name}`", result.stdout), result.stdout


def test_check_fix_says_why_per_class_writes_nothing_there_and_exits_non_zero(tmp_path):
    root = tree(tmp_path)
    result = spec_contract("check", "--fix", "--no-cache", cwd=root)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    for stem, (name, text) in SHAPES.items():
        assert f"not fixed: minisgl/models/{stem}.py: {name}: {WHY}" in result.stderr, result.stderr
        assert (root / "minisgl" / "models" / f"{stem}.py").read_text() == text
    assert "get_embed_and_head" in (root / "minisgl" / "models" / "llava.py").read_text()  # the others still fixed


def test_check_fix_on_the_declined_files_alone_exits_non_zero(tmp_path):
    root = tree(tmp_path)
    paths = [f"minisgl/models/{stem}.py" for stem in SHAPES]
    result = spec_contract("check", *paths, "--fix", "--no-cache", cwd=root)
    assert result.returncode == 1, result.stderr
    assert len(re.findall(r"not fixed: ", result.stderr)) == len(SHAPES), result.stderr
    assert "Fixed nothing: every fix asked for was declined" in result.stdout, result.stdout
    for stem, (_, text) in SHAPES.items():
        assert (root / "minisgl" / "models" / f"{stem}.py").read_text() == text


# --- the server ----------------------------------------------------------------------------------------------


def emacs_with_disabled_support() -> types.ClientCapabilities:
    """Eager edits, and a client that shows disabled actions with their reason."""
    caps = CLIENTS["emacs-29.1"]()
    caps.text_document.code_action.disabled_support = True
    return caps


CAPABILITIES = {
    "emacs-29.1": lambda: CLIENTS["emacs-29.1"](),  # eager, no disabled actions: told by a message
    "emacs-disabled": emacs_with_disabled_support,  # eager, disabled actions
    "neovim-0.11": lambda: CLIENTS["neovim-0.11"](),  # resolves lazily, no disabled actions: told by a message
    "vscode-1.139.1": lambda: CLIENTS["vscode-1.139.1"](),  # resolves lazily, disabled actions
}


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client),
    params=list(CAPABILITIES),
)
async def client(lsp_client: LanguageClient, request):
    lsp_client.editor = request.param
    lsp_client.init_result = None
    yield lsp_client
    if lsp_client.init_result is not None:
        await lsp_client.shutdown_session()


def forwarding(actions: list[types.CodeAction]) -> list[types.CodeAction]:
    return [a for a in actions if not a.title.startswith("Ignore")]


async def test_code_actions_offer_no_fix_they_cannot_make_and_say_why(client, tmp_path):
    root = tree(tmp_path)
    capabilities = CAPABILITIES[client.editor]()
    await initialize(client, [root], capabilities=capabilities)
    shows_disabled = bool(capabilities.text_document.code_action.disabled_support)
    for stem, (name, text) in SHAPES.items():
        uri = open_document(client, root / "minisgl" / "models" / f"{stem}.py", text)
        assert await diagnostics_now(client, uri), stem  # the wrapper is checked, not dropped
        actions = await code_actions(client, uri, text)
        assert any(a.title.startswith("Ignore SC001") for a in actions), (stem, [a.title for a in actions])
        offered = forwarding(actions)
        reason = f"{name}: {WHY}"
        if shows_disabled:
            assert offered, stem
            for action in offered:  # listed, greyed out with the reason, and nothing to apply or resolve
                assert action.disabled is not None and action.disabled.reason == reason, (stem, action)
                assert action.edit is None and action.data is None, (stem, action)
        else:
            assert offered == [], (stem, [a.title for a in offered])
            told = await until(lambda why=reason: [m for m in client.messages if why in m.message], f"why {name} is not fixed")
            assert told[0].message == f"spec-contract: not fixed: {reason}"
            await code_actions(client, uri, text)  # asking again (a cursor move) does not repeat the message
            await diagnostics_now(client, uri)
            assert len([m for m in client.messages if reason in m.message]) == 1
    assert not [m for m in client.log_messages if "Traceback" in m.message]


@pytest.mark.parametrize("client", ["vscode-1.139.1"], indirect=True)
async def test_a_refusal_known_only_at_resolve_time_answers_with_a_message_not_an_empty_edit(client, tmp_path):
    """The actions are listed while the file can be fixed; the text then gains a deep chain (the findings
    stay), and the user picks an action from the list they saw."""
    root = tree(tmp_path)
    await initialize(client, [root], capabilities=CAPABILITIES[client.editor]())
    name, deep = SHAPES["deep_strings"]
    shallow = wrapper(name, "'part'")
    path = root / "minisgl" / "models" / "deep_strings.py"
    uri = open_document(client, path, shallow)
    listed = forwarding(await code_actions(client, uri, shallow))
    assert listed and all(a.disabled is None and a.data is not None for a in listed), listed
    replace_document(client, uri, deep, version=2)
    assert await diagnostics_now(client, uri)  # the findings are still there, in the deep text
    for action in listed:
        resolved = await client.code_action_resolve_async(action)
        assert resolved.edit is None, action.title
    told = [m.message for m in client.messages]
    assert f"spec-contract: not fixed: {name}: {WHY}" in told, told
