"""Which code actions are offered for which findings, and how ``context.only`` filters them."""

from lsprotocol import types
from pygls.workspace import PositionCodec
from spec_contract.engine.results import CallSite, Finding, Provider, Span, TextEdit
from spec_contract.lsp.actions import FIX_ALL_KIND, find, kind_allowed, plan, workspace_edit
from spec_contract.lsp.convert import lines_of


def finding(member, qualname="m.llava.Llava", line=5, code="SC001"):
    site = CallSite("/w/eagle.py", Span(10, 8, 10, 20), "target", member, "x.m()", False, True)
    return Finding(
        code=code, severity="error", path="/w/llava.py", span=Span(line, 6, line, 11), class_name=qualname.split(".")[-1],
        class_qualname=qualname, member=member, roles=("target",), delegate="language_model",
        inner_class="Llama", provider=Provider("m.llama.Llama", "/w/llama.py", Span(3, 8, 3, 20), "method"),
        call_sites=(site,),
    )


def titles(planned):
    return [(p.kind, p.title) for p in planned]


def test_kind_prefix_matching():
    assert kind_allowed("quickfix", None) and kind_allowed("quickfix", [])
    assert kind_allowed(FIX_ALL_KIND, ["source"]) and kind_allowed(FIX_ALL_KIND, ["source.fixAll"])
    assert kind_allowed(FIX_ALL_KIND, [FIX_ALL_KIND])
    assert not kind_allowed(FIX_ALL_KIND, ["quickfix"]) and not kind_allowed("quickfix", ["source"])
    assert not kind_allowed("source.fixAllx", ["source.fixAll"])


def test_two_findings_on_one_class_offer_each_fix_all_of_them_ignore_and_fix_all():
    findings = [finding("get_embed_and_head"), finding("set_eagle3_layers_to_capture")]
    assert titles(plan(findings, (5, 5), [], None)) == [
        ("quickfix", "Add delegation of `get_embed_and_head` to `self.language_model`"),
        ("quickfix", "Add delegation of `set_eagle3_layers_to_capture` to `self.language_model`"),
        ("quickfix", "Add all 2 missing delegations to `Llava`"),
        ("quickfix", "Ignore SC001 for this class"),
        (FIX_ALL_KIND, "Add all missing delegations in this file (spec-contract)"),
    ]
    preferred = [p.preferred for p in plan(findings, (5, 5), [], None)]
    assert preferred == [True, True, False, False, False]


def test_only_filters_by_kind():
    findings = [finding("a"), finding("b")]
    assert [p.action for p in plan(findings, (5, 5), [], ["source.fixAll"])] == ["fixAll"]
    assert [p.action for p in plan(findings, (5, 5), [], ["quickfix"])] == ["delegate", "delegate", "delegateAll", "ignore"]
    assert plan(findings, (5, 5), [], ["refactor"]) == []


def test_range_elsewhere_offers_only_the_file_wide_fix_unless_a_diagnostic_names_the_finding():
    findings = [finding("a"), finding("b", qualname="m.llava.Other", line=30)]
    assert [p.action for p in plan(findings, (0, 1), [], None)] == ["fixAll"]
    keyed = plan(findings, (0, 1), [("SC001", "m.llava.Other", "b")], None)
    assert [p.title for p in keyed][0] == "Add delegation of `b` to `self.language_model`"


def test_single_finding_offers_no_add_all():
    assert "delegateAll" not in [p.action for p in plan([finding("a")], (5, 5), [], None)]


def test_resolve_finds_findings_by_key_and_skips_vanished_ones():
    a, b = finding("a"), finding("b")
    assert find([a, b], [["SC001", "m.llava.Llava", "b"], ["SC001", "m.llava.Llava", "gone"]]) == [b]


def test_workspace_edit_shapes_and_encoding():
    text = "class É:\n    pass\n"
    edits = [TextEdit("/w/x.py", Span(0, 7, 0, 7), "Z")]
    lines = lambda path: lines_of(text)  # noqa: E731
    changes = workspace_edit(edits, lines, PositionCodec("utf-8"), False, lambda uri: 3)
    (uri, (edit,)), = changes.changes.items()
    assert uri == "file:///w/x.py" and edit.range.start == types.Position(0, 8)
    versioned = workspace_edit(edits, lines, PositionCodec("utf-16"), True, lambda uri: 3)
    (change,) = versioned.document_changes
    assert change.text_document.version == 3 and change.edits[0].range.start == types.Position(0, 7)


def test_capability_findings_offer_their_own_fix_and_never_a_forward():
    sc003 = finding("set_dflash_layers_to_capture", code="SC003")
    sc003 = Finding(**{**sc003.__dict__, "algorithm": "DFLASH"})
    assert titles(plan([sc003], (5, 5), [], None)) == [
        ("quickfix", "Enable DFLASH for `Llava`: forward `set_dflash_layers_to_capture`"),
        ("quickfix", "Ignore SC003 for this class"),
        (FIX_ALL_KIND, "Add all missing delegations in this file (spec-contract)"),
    ]
    # not declared / not backed / unverifiable Protocol capabilities: forwarding methods would not help
    declare = finding("SupportsEagle3", code="SC006")
    not_backed = finding("SupportsEagle3", qualname="m.other.Other", code="SC007")
    assert titles(plan([declare, not_backed], (5, 5), [], None)) == [
        ("quickfix", "Declare `SupportsEagle3` on `Llava`"),
        ("quickfix", "Ignore SC006 for this class"),
        ("quickfix", "Ignore SC007 for this class"),
    ]


def test_implement_findings_offer_to_implement_like_their_model_and_nothing_when_no_model_fits():
    from spec_contract.engine.results import How, Provision

    like = Provision(How.IMPLEMENT, like="m.qwen.Qwen", body="def m(self):\n    return 1\n", path="/w/llava.py",
                     in_class="Llava")
    sc010 = Finding(**{**finding("get_embed_and_head", code="SC010").__dict__,
                       "implements": (("get_embed_and_head", like),)})
    both = Provision(How.BOTH, delegate="language_model", inner_class="Llama", like="m.qwen.Qwen", body="",
                     path="/w/llama.py", in_class="Llama")
    chain = Finding(**{**finding("set_embed", qualname="m.llava.Other", line=30, code="SC010").__dict__,
                       "implements": (("set_embed", both),)})
    hint = Finding(**{**finding("set_eagle3_layers_to_capture", qualname="m.llava.Third", line=50,
                                code="SC012").__dict__,
                      "severity": "hint", "algorithm": "EAGLE3", "implements": (("set_eagle3_layers_to_capture", like),)})
    unfit = finding("get_embed_and_head", qualname="m.llava.Fourth", line=70, code="SC010")  # no implements
    # a degraded run's hint implements the one member the guarded call skips: it enables nothing
    skipped = Finding(**{**finding("set_lm_head_from_target", qualname="m.llava.Fifth", line=75, code="SC014").__dict__,
                         "severity": "hint", "algorithm": "EAGLE", "implements": (("set_lm_head_from_target", like),)})
    assert titles(plan([skipped], (75, 75), [], None))[0] == ("quickfix", "Implement `set_lm_head_from_target` like `Qwen`")
    assert [t for k, t in titles(plan([sc010, chain, hint, unfit], (0, 80), [], None)) if not t.startswith("Ignore")] == [
        "Implement `get_embed_and_head` like `Qwen`",
        "Implement `set_embed` in `Llama` like `Qwen` and forward it to `self.language_model`",
        "Enable EAGLE3 for `Third`: implement 1 member like `Qwen`",
        "Add all missing delegations in this file (spec-contract)",
    ]
    # enabling a refused algorithm is a source action (issue 20, item 5), listed for the class, not a quick fix
    assert titles(plan([hint], (50, 50), [], None))[0] == (
        "source.enableEagle3.spec-contract", "Enable EAGLE3 for `Third`: implement 1 member like `Qwen`")
    assert [k for k, _ in titles(plan([hint], (50, 50), [], ["source"]))] == [
        "source.enableEagle3.spec-contract", "source.fixAll.spec-contract"]
    assert titles(plan([hint], (50, 50), [], ["quickfix"])) == [("quickfix", "Ignore SC012 for this class")]


def test_the_most_severe_fix_comes_first_and_the_menu_stays_short():
    """Issue 23, item 6: on a class with an information, a warning and errors, the first entry fixes an error;
    per-finding fixes stop at MAX_SINGLE_FIXES, "Add all N" counts the members it adds, one Ignore per class."""
    def graded(member, code, severity):
        return Finding(**{**finding(member, code=code).__dict__, "severity": severity})

    findings = [graded("get_hot_token_ids", "SC002", "information"), graded("get_embed_and_head", "SC001", "error"),
                graded("set_embed_and_head", "SC005", "warning"), graded("set_eagle3_layers_to_capture", "SC001", "error"),
                graded("get_hidden_dim", "SC004", "information")]
    planned = plan(findings, (5, 5), [], ["quickfix"])
    assert [p.title for p in planned] == [
        "Add delegation of `get_embed_and_head` to `self.language_model`",
        "Add delegation of `set_eagle3_layers_to_capture` to `self.language_model`",
        "Add delegation of `set_embed_and_head` to `self.language_model`",
        "Add all 5 missing delegations to `Llava`",
        "Ignore SC001 for this class",
    ]
    assert [p.preferred for p in planned] == [True, True, True, False, False]
    assert len(planned[3].findings) == 5
