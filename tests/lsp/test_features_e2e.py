"""Hover, go to implementation, code actions (eager and resolved) and position encodings, end to end."""

from __future__ import annotations

import shutil
from pathlib import Path

from lsp_harness import (
    ENCODINGS,
    apply_edits,
    column,
    diagnostics_now,
    edits_for,
    indexed_diagnostics,
    initialize,
    is_pull,
    members,
    open_document,
    replace_document,
    wait_for_diagnostics,
)
from lsprotocol import types

KIMI = Path(__file__).resolve().parents[1] / "fixtures" / "kimi_k25"
WORKER_LINE = 10  # embed, head = self.target_worker.model_runner.model.get_embed_and_head()


def at(uri: str, line: int, character: int) -> dict:
    return {"text_document": types.TextDocumentIdentifier(uri=uri), "position": types.Position(line, character)}


async def hover_text(client, uri, line, character) -> str:
    result = await client.text_document_hover_async(types.HoverParams(**at(uri, line, character)))
    assert result is not None, f"no hover at {line}:{character}"
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


async def test_hover_on_wrapper_definition_and_call_site(client, demo):
    await initialize(client, [demo])
    llava = open_document(client, demo / "minisgl/models/llava.py")
    text = await hover_text(client, llava, 5, 10)
    # Worded as the diagnostics are (code, severity, counts), the members with findings first (issue 23, item 6),
    # each detail on a line of its own, the more worker lines counted in words, each place a `path:line` link
    # except for Neovim, which follows no link: it printed (0.7) or wrapped around (0.11) the URI (issue 37, item 6)
    def place(relative: str, line: int) -> str:
        text = f"`{relative}:{line}`"
        return text if client.editor.startswith("neovim") else f"[{text}]({(demo / relative).as_uri()}#L{line})"

    assert text.startswith("**`LlavaForConditionalGeneration`** — speculative-decoding contract (3 members; 2 errors)")
    assert ("- `get_embed_and_head` (target): **missing**, SC001 error\n"
            "  - `LlamaForCausalLM` provides it via `self.language_model`\n"
            f"  - called at {place('minisgl/speculative/eagle_worker.py', 11)} (start-up)\n") in text
    assert "- `set_embed_and_head` (draft): forwarded to `self.language_model`" in text
    assert text.index("SC001 error") < text.index("forwarded to")
    eagle3 = text.split("- EAGLE3: crashes as the target\n", 1)[1].split("\n- ", 1)[0]  # its crashes, each with its fix
    assert (f"  - `set_eagle3_layers_to_capture` at {place('minisgl/model_executor/model_runner.py', 14)}"
            " (start-up)\n    - forward it to `self.language_model` (`LlamaForCausalLM` has it)") in eagle3
    assert ("file:" in text) is not client.editor.startswith("neovim")

    llama = open_document(client, demo / "minisgl/models/llama.py")
    text = await hover_text(client, llama, 16, 12)
    assert text.startswith("**`get_embed_and_head`** is part of the speculative-decoding contract")
    assert (
        f"- target model, required: called by {place('minisgl/speculative/eagle_worker.py', 11)}"
        " (start-up) — `embed, head = self.target_worker.model_runner.model.get_embed_and_head()`"
    ) in text

    worker = open_document(client, demo / "minisgl/speculative/eagle_worker.py")
    text = await hover_text(client, worker, WORKER_LINE, 65)
    assert text.startswith("**`get_embed_and_head`** on the target model — required (start-up)")
    assert f"- `LlamaForCausalLM` ({place('minisgl/models/llama.py', 17)})" in text
    assert "Wrappers that do not forward it:\n- `LlavaForConditionalGeneration`" in text

    nothing = await client.text_document_hover_async(types.HoverParams(**at(worker, 0, 3)))
    assert nothing is None


async def test_implementation_from_a_call_site(client, demo):
    await initialize(client, [demo])
    worker = open_document(client, demo / "minisgl/speculative/eagle_worker.py")
    result = await client.text_document_implementation_async(types.ImplementationParams(**at(worker, WORKER_LINE, 70)))
    assert result == [
        types.Location(
            uri=(demo / "minisgl/models/llama.py").as_uri(),
            range=types.Range(types.Position(16, 8), types.Position(16, 26)),
        )
    ]
    elsewhere = await client.text_document_implementation_async(types.ImplementationParams(**at(worker, 0, 0)))
    assert elsewhere is None


async def code_actions(client, uri, diagnostics, only=None, line=5):
    """The actions as the user would see them, with edits (resolved when the client resolves lazily)."""
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 6), types.Position(line, 6)),
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )
    lazy = client.editor != "emacs-29.1"
    actions = []
    for action in result:
        assert (action.edit is None) is lazy, action.title
        if lazy:
            action = await client.code_action_resolve_async(action)
        actions.append(action)
    return actions


async def test_code_actions_offer_each_kind_and_honour_only(client, demo):
    await initialize(client, [demo])
    path = demo / "minisgl/models/llava.py"
    uri = open_document(client, path)
    diagnostics = await indexed_diagnostics(client, uri, 2)
    actions = await code_actions(client, uri, diagnostics)
    assert [(a.kind, a.title, a.is_preferred) for a in actions] == [
        ("quickfix", "Add delegation of `get_embed_and_head` to `self.language_model`", True),
        ("quickfix", "Add delegation of `set_eagle3_layers_to_capture` to `self.language_model`", True),
        ("quickfix", "Add all 2 missing delegations to `LlavaForConditionalGeneration`", None),
        ("quickfix", "Ignore SC001 for this class", None),
        ("source.fixAll.spec-contract", "Add all missing delegations in this file (spec-contract)", None),
    ]
    assert [members(a.diagnostics) for a in actions[:2]] == [["get_embed_and_head"], ["set_eagle3_layers_to_capture"]]
    for action in actions:
        if client.editor == "neovim-0.11":  # no documentChanges support: plain changes
            assert action.edit.document_changes is None and list(action.edit.changes) == [uri]
        else:
            (change,) = action.edit.document_changes
            assert change.text_document == types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=1)

    assert [a.kind for a in await code_actions(client, uri, diagnostics, only=["source.fixAll"])] == [
        "source.fixAll.spec-contract"
    ]
    assert len(await code_actions(client, uri, diagnostics, only=["source.fixAll.spec-contract"])) == 1
    assert [a.kind for a in await code_actions(client, uri, diagnostics, only=["quickfix"])] == ["quickfix"] * 4
    assert await code_actions(client, uri, diagnostics, only=["refactor"]) == []


async def test_applying_fixes(client, demo):
    """One delegation, then the rest via fix-all; then, on a fresh copy of the text, the suppression."""
    await initialize(client, [demo])
    path = demo / "minisgl/models/llava.py"
    original = path.read_text()
    uri = open_document(client, path)
    encoding = ENCODINGS[client.editor]
    diagnostics = await indexed_diagnostics(client, uri, 2)
    one = (await code_actions(client, uri, diagnostics))[0]
    text = apply_edits(original, edits_for(one.edit, uri), encoding)
    assert "    def get_embed_and_head(self):\n        return self.language_model.get_embed_and_head()\n" in text
    replace_document(client, uri, text, 2)
    if is_pull(client):
        remaining = await diagnostics_now(client, uri)
    else:
        remaining = await wait_for_diagnostics(client, uri, lambda d: len(d) == 1, "one diagnostic left")
    assert members(remaining) == ["set_eagle3_layers_to_capture"]

    (fix_all,) = await code_actions(client, uri, remaining, only=["source.fixAll"])
    text = apply_edits(text, edits_for(fix_all.edit, uri), encoding)
    compile(text, "llava.py", "exec")
    replace_document(client, uri, text, 3)
    if is_pull(client):
        assert await diagnostics_now(client, uri) == []
    else:
        await wait_for_diagnostics(client, uri, lambda d: d == [], "no diagnostics after fix-all")

    replace_document(client, uri, original, 4)
    diagnostics = await indexed_diagnostics(client, uri, 2)
    ignore = next(a for a in await code_actions(client, uri, diagnostics) if a.title.startswith("Ignore"))
    text = apply_edits(original, edits_for(ignore.edit, uri), encoding)
    assert "# spec-contract: ignore[SC001]\nclass LlavaForConditionalGeneration:" in text
    replace_document(client, uri, text, 5)
    if is_pull(client):
        assert await diagnostics_now(client, uri) == []
    else:
        await wait_for_diagnostics(client, uri, lambda d: d == [], "no diagnostics after the suppression")


async def test_non_ascii_before_names_in_each_position_encoding(client, demo):
    """Neovim negotiates utf-8, Emacs utf-32, VS Code utf-16: ranges and request positions follow suit."""
    llava_path = demo / "minisgl/models/llava.py"
    worker_path = demo / "minisgl/speculative/eagle_worker.py"
    llava_path.write_text(llava_path.read_text().replace("LlavaForConditionalGeneration", "ÉtéLlavaForConditionalGeneration"))
    worker_path.write_text(worker_path.read_text().replace("embed, head", "émbed_ü, head"))
    result = await initialize(client, [demo])
    encoding = ENCODINGS[client.editor]
    assert result.capabilities.position_encoding == encoding
    uri = open_document(client, llava_path)
    worker = open_document(client, worker_path)
    diagnostics = await indexed_diagnostics(client, uri, 2)
    class_line = llava_path.read_text().splitlines()[5]
    name = "ÉtéLlavaForConditionalGeneration"
    expected = types.Range(
        types.Position(5, column(class_line, 6, encoding)),
        types.Position(5, column(class_line, 6 + len(name), encoding)),
    )
    assert [d.range for d in diagnostics] == [expected, expected]

    worker_line = worker_path.read_text().splitlines()[WORKER_LINE]
    start = worker_line.index("get_embed_and_head")
    site = types.Range(
        types.Position(WORKER_LINE, column(worker_line, start, encoding)),
        types.Position(WORKER_LINE, column(worker_line, start + len("get_embed_and_head"), encoding)),
    )
    if client.editor != "emacs-29.1":
        embed = next(d for d in diagnostics if d.data["member"] == "get_embed_and_head")
        assert embed.related_information[0].location.range == site

    # The last character of the member name, in client units: off by the prefix's extra bytes otherwise.
    last = column(worker_line, start + len("get_embed_and_head") - 1, encoding)
    hover = await client.text_document_hover_async(types.HoverParams(**at(worker, WORKER_LINE, last)))
    assert hover.range == site
    locations = await client.text_document_implementation_async(types.ImplementationParams(**at(worker, WORKER_LINE, last)))
    assert [loc.uri for loc in locations] == [(demo / "minisgl/models/llama.py").as_uri()]

    actions = await code_actions(client, uri, diagnostics, only=["source.fixAll"])
    text = apply_edits(llava_path.read_text(), edits_for(actions[0].edit, uri), encoding)
    assert "def set_eagle3_layers_to_capture(self, layer_ids=None):" in text
    replace_document(client, uri, text, 2)
    if is_pull(client):
        assert await diagnostics_now(client, uri) == []
    else:
        await wait_for_diagnostics(client, uri, lambda d: d == [], "no diagnostics after fix-all")


async def test_contract_command_lists_every_call_site_in_client_positions(client, demo):
    await initialize(client, [demo])
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="spec-contract.contract", arguments=[])
    )
    [folder] = result["folders"]
    assert folder["root"] == demo.as_uri()
    by_member = {(e["role"], e["member"]): e for e in folder["contract"]}
    assert set(by_member) == {
        ("target", "get_embed_and_head"), ("target", "set_eagle3_layers_to_capture"),
        ("draft", "load_lm_head_from_target"), ("draft", "set_embed_and_head"),
    }
    entry = by_member[("target", "get_embed_and_head")]
    assert entry["required"] is True
    assert entry["call_sites"] == [{
        "uri": (demo / "minisgl/speculative/eagle_worker.py").as_uri(), "line": WORKER_LINE, "character": 60,
        "text": "embed, head = self.target_worker.model_runner.model.get_embed_and_head()", "guarded": False,
    }]
    assert by_member[("draft", "load_lm_head_from_target")]["required"] is False



async def test_implementation_and_definition_hover_after_a_reanalysis(neovim, demo):
    """The usual order in an editor: the index is built, then the user opens and edits a worker and asks."""
    await initialize(neovim, [demo])
    llava = open_document(neovim, demo / "minisgl/models/llava.py")
    await wait_for_diagnostics(neovim, llava, lambda d: len(d) == 2, "the index")
    worker_path = demo / "minisgl/speculative/eagle_worker.py"
    worker = open_document(neovim, worker_path)
    replace_document(neovim, worker, worker_path.read_text() + "\n# edited\n", 2)  # a new analysis
    locations = await neovim.text_document_implementation_async(types.ImplementationParams(**at(worker, WORKER_LINE, 70)))
    assert [loc.uri for loc in locations or []] == [(demo / "minisgl/models/llama.py").as_uri()]
    llama = open_document(neovim, demo / "minisgl/models/llama.py")
    text = await hover_text(neovim, llama, 16, 12)
    assert "is part of the speculative-decoding contract" in text


async def test_a_check_after_the_load_is_a_missing_forward_with_its_hover_and_fix(client, demo):
    """A gated EAGLE-3 capture: the check tests the loaded model, so a wrapper whose language model passes it and
    which does not forward the member fails after the load (SC001, an error, naming the check); the hover says
    so per algorithm, and the quick fix forwards the member; the file then checks clean of it."""
    runner = demo / "minisgl/model_executor/model_runner.py"
    runner.write_text(runner.read_text().replace(
        "        if self.eagle_use_aux_hidden_state:\n",
        "        if self.eagle_use_aux_hidden_state:\n"
        "            if not hasattr(self.model, \"set_eagle3_layers_to_capture\"):\n"
        "                raise ValueError(\"EAGLE3 needs set_eagle3_layers_to_capture\")\n"))
    await initialize(client, [demo])
    path = demo / "minisgl/models/llava.py"
    original = path.read_text()
    uri = open_document(client, path)
    diagnostics = await indexed_diagnostics(client, uri, 2)
    gate = next(d for d in diagnostics if "set_eagle3_layers_to_capture" in d.message)
    assert (gate.code, gate.severity) == ("SC001", types.DiagnosticSeverity.Error)
    assert "refuses the run only after loading the weights" in gate.message

    text = await hover_text(client, uri, 5, 10)
    assert "**Speculative algorithms**" in text
    assert "- EAGLE3: crashes as the target\n  - `set_eagle3_layers_to_capture` at" in text

    actions = await code_actions(client, uri, [gate])
    forward = next(a for a in actions if "set_eagle3_layers_to_capture" in a.title)
    assert forward.title == "Add delegation of `set_eagle3_layers_to_capture` to `self.language_model`"
    fixed, remaining = await applied(client, uri, original, forward, ["get_embed_and_head"])
    assert "return self.language_model.set_eagle3_layers_to_capture(" in fixed
    assert members(remaining) == ["get_embed_and_head"]


async def applied(client, uri, original, action, left):
    """Apply the action's edit as the editor would (it must compile) and wait until the diagnostics name
    the members ``left``: (the fixed text, those diagnostics)."""
    fixed = apply_edits(original, edits_for(action.edit, uri), ENCODINGS[client.editor])
    compile(fixed, uri, "exec")
    replace_document(client, uri, fixed, 2)
    if is_pull(client):
        return fixed, await diagnostics_now(client, uri)
    return fixed, await wait_for_diagnostics(client, uri, lambda d: members(d) == left, f"only {left} left")


async def test_an_implement_finding_and_its_quick_fix(client, demo):
    """A class with its own embedding and head that takes the draft's (part of EAGLE) but lacks
    get_embed_and_head, which no inner model has: SC010, an error naming its model; the quick fix writes the
    model's body, and the finding is gone."""
    path = demo / "minisgl/models/mistral.py"
    path.write_text(
        "class MistralForCausalLM:\n"
        "    def __init__(self, config):\n"
        "        self.embed_tokens = None\n"
        "        self.lm_head = None\n\n"
        "    def set_embed_and_head(self, embed, head):\n"
        "        self.embed_tokens = embed\n"
        "        self.lm_head = head\n\n\n"
        "EntryClass = MistralForCausalLM\n")
    await initialize(client, [demo])
    original = path.read_text()
    uri = open_document(client, path)
    diagnostic, crash = await indexed_diagnostics(client, uri, 2)
    assert (diagnostic.code, diagnostic.severity) == ("SC010", types.DiagnosticSeverity.Error)
    assert "implement it like `LlamaForCausalLM.get_embed_and_head`" in diagnostic.message
    # EAGLE-3's capture, which it shows no sign of meaning, is the model runner's line's finding (SC011); the
    # class's file shows the class's own part of it, naming that line, as check and the matrix do
    assert (crash.code, crash.severity, crash.data["member"]) == (
        "SC011", types.DiagnosticSeverity.Warning, "set_eagle3_layers_to_capture")
    assert "minisgl/model_executor/model_runner.py:14" in crash.message
    if client.editor != "emacs-29.1":  # relatedInformation: false in its capabilities
        # the model to copy, named as such: it is no inner class (VS Code printed ``llama.py[Ln 4]: `` () implements
        # `get_embed_and_head` here``, issue 37, item 6)
        *_, model = diagnostic.related_information
        assert model.location.uri == (demo / "minisgl/models/llama.py").as_uri()
        assert model.message == "`LlamaForCausalLM` implements `get_embed_and_head`: the class the fix copies it from"
        # SC011 on the worker line (Mistral shows no EAGLE3 support): the call site, and no provider, which it has
        # none of (a location `file:///` and an empty class before)
        runner = open_document(client, demo / "minisgl/model_executor/model_runner.py")
        (unrefused,) = await indexed_diagnostics(client, runner, 1)
        assert unrefused.code == "SC011"
        assert [info.location.uri for info in unrefused.related_information] == [runner]
    text = await hover_text(client, uri, 0, 8)
    assert "implement like `LlamaForCausalLM`" in text
    actions = await code_actions(client, uri, [diagnostic])
    implement = next(a for a in actions if a.title.startswith("Implement"))
    assert implement.title == "Implement `get_embed_and_head` like `LlamaForCausalLM`"
    # now it serves EAGLE's target; EAGLE-3's crash stays
    fixed, remaining = await applied(client, uri, original, implement, ["set_eagle3_layers_to_capture"])
    assert "    def get_embed_and_head(self):\n        return self.embed_tokens, self.lm_head\n" in fixed
    assert [(d.code, d.data["member"]) for d in remaining] == [("SC011", "set_eagle3_layers_to_capture")]


async def test_kimi_menu_is_short_worst_first_and_add_all_adds_what_it_says(client, tmp_path):
    """Issue 23, item 6, on the Kimi fixture (two errors, a warning, an information on the class name): the
    first entry fixes an error, the quick-fix menu has at most five entries, and "Add all N" adds N members."""
    kimi = tmp_path / "kimi_k25"
    shutil.copytree(KIMI, kimi)
    await initialize(client, [kimi])
    path = kimi / "sglang/srt/models/kimi_k25.py"
    uri = open_document(client, path)
    diagnostics = await indexed_diagnostics(client, uri, 4)
    class_line = next(i for i, line in enumerate(path.read_text().splitlines()) if line.startswith("class "))
    actions = await code_actions(client, uri, diagnostics, only=["quickfix"], line=class_line)
    titles = [a.title for a in actions]
    assert len(titles) <= 5, titles
    assert titles[0] in ("Add delegation of `get_embed_and_head` to `self.language_model`",
                         "Add delegation of `set_eagle3_layers_to_capture` to `self.language_model`"), titles
    assert "Add all 4 missing delegations to `KimiK25ForConditionalGeneration`" in titles, titles
    add_all = actions[titles.index("Add all 4 missing delegations to `KimiK25ForConditionalGeneration`")]
    original = path.read_text()
    fixed = apply_edits(original, edits_for(add_all.edit, uri), ENCODINGS[client.editor])
    added = {line.split("(")[0].split()[-1] for line in fixed.splitlines() if line.strip().startswith("def ")} - {
        line.split("(")[0].split()[-1] for line in original.splitlines() if line.strip().startswith("def ")}
    assert added == {"get_embed_and_head", "set_eagle3_layers_to_capture", "set_embed_and_head", "get_hot_token_ids"}


async def test_enable_eagle3_is_a_source_action_that_implements_the_members(client, demo):
    """Issue 20, item 5: a class the EAGLE3 gate refuses cleanly, which could implement the gate's member like
    its sibling, gets a hint (SC012); "Enable EAGLE3 for X" is a source action (source.enableEagle3.spec-contract,
    listed when the client asks for source actions on the class), not a quick fix; its edit writes the member
    like the model, and the hint goes."""
    runner = demo / "minisgl/model_executor/model_runner.py"
    runner.write_text(runner.read_text().replace(
        "        if self.eagle_use_aux_hidden_state:\n",
        "        if self.eagle_use_aux_hidden_state:\n"
        "            if not hasattr(self.model, \"set_eagle3_layers_to_capture\"):\n"
        "                raise ValueError(\"EAGLE3 needs set_eagle3_layers_to_capture\")\n"))
    path = demo / "minisgl/models/mistral.py"
    path.write_text(
        "class MistralForCausalLM:\n"
        "    def __init__(self, config):\n"
        "        self.embed_tokens = None\n"
        "        self.lm_head = None\n"
        "        self.capture_layers = []\n\n"
        "    def get_embed_and_head(self):\n"
        "        return self.embed_tokens, self.lm_head\n\n"
        "    def set_embed_and_head(self, embed, head):\n"
        "        self.embed_tokens = embed\n"
        "        self.lm_head = head\n\n\n"
        "EntryClass = MistralForCausalLM\n")
    await initialize(client, [demo])
    original = path.read_text()
    uri = open_document(client, path)
    # the model runner's check refuses it (after the load): the class's file shows that line's finding for the
    # class (SC011, a warning naming the check), and the hint that the class could pass it
    refused, hint = await indexed_diagnostics(client, uri, 2)
    assert (refused.code, refused.severity) == ("SC011", types.DiagnosticSeverity.Warning)
    assert "the engine's check at minisgl/model_executor/model_runner.py:14 refuses" in refused.message
    assert (hint.code, hint.severity) == ("SC012", types.DiagnosticSeverity.Hint)
    # the warning's fix is the quick fix; the hint's is the source action below
    quick = await code_actions(client, uri, [refused, hint], only=[types.CodeActionKind.QuickFix], line=0)
    assert [a.title for a in quick] == ["Implement `set_eagle3_layers_to_capture` like `LlamaForCausalLM`",
                                        "Ignore SC011 for this class"]
    source = await code_actions(client, uri, [], only=[types.CodeActionKind.Source], line=0)
    enable = next(a for a in source if a.title.startswith("Enable"))
    assert (enable.kind, enable.title) == ("source.enableEagle3.spec-contract",
                                           "Enable EAGLE3 for `MistralForCausalLM`: implement 1 member like "
                                           "`LlamaForCausalLM`")
    fixed, remaining = await applied(client, uri, original, enable, [])
    assert ("    def set_eagle3_layers_to_capture(self, layer_ids=None):\n"
            "        self.capture_layers = list(layer_ids or [])\n") in fixed
    assert remaining == []
