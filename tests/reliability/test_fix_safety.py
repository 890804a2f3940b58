"""Fix safety: a corpus of wrapper variants, fixed by ``check --fix`` and by the server's code actions.

Every variant is a model file beside the demo's (``examples/demo``) whose wrapper misses the forwards the
demo's workers call, written in one awkward way: a character ``str.splitlines`` breaks at and Python does
not above or inside the class, a one-line body, a last statement continued with a backslash or ended with
``;``, decorators, tabs, CRLF or CR line endings, a BOM, a PEP 263 cookie, non-ASCII text, a nested class as
the last statement, ``TYPE_CHECKING`` imports, the class at the end of the file with and without a final
newline, and code nested deeper than the stub generator can edit.

For each variant, the CLI (a real ``spec-contract check --fix`` run over the whole corpus at once) and the
server's code actions (eager edits for an Emacs client, resolved ones for a VS Code client, one session
each for the whole corpus) must give a text that parses, keeps every original line in order, and checks
clean, or refuse with a message (and, for the CLI, a non-zero exit) while the others are still fixed.
"""

from __future__ import annotations

import ast
import difflib
import io
import json
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from spec_contract.engine import RULES

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lsp"))
from lsp_harness import code_actions, diagnostics_now, edits_for, initialize, make_client, open_document  # noqa: E402

DEMO = REPO / "examples" / "demo"
SERVER_COMMAND = [sys.executable, "-m", "spec_contract", "serve", "--stdio"]
FIX_ALL = "source.fixAll.spec-contract"
EVERY_CODE = ",".join(rule.code for rule in RULES)
# Characters ``str.splitlines`` breaks lines at and Python's parser does not.
ODD_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
BOM = b"\xef\xbb\xbf"

IMPORT = "from minisgl.models.llama import LlamaForCausalLM\n"


def body(name: str, indent: str = "    ", last: str = "") -> str:
    """A wrapper that holds the demo's text model and forwards only ``forward``; ``last`` ends its body."""
    i, ii = indent, indent * 2
    return (
        f"class {name}:\n"
        f"{i}def __init__(self, config):\n"
        f"{ii}self.language_model = LlamaForCausalLM(config)\n"
        f"\n"
        f"{i}def forward(self, batch):\n"
        f"{ii}return self.language_model.forward(batch)\n"
        f"{last}"
    )


def module(name: str, above: str = "", **kw) -> str:
    return f'"""Variant {name}."""\n\n{IMPORT}{above}\n\n{body(name, **kw)}\n\nx = 1\n'


def _variants() -> dict[str, str | bytes]:
    """name → the file's text (str: written as UTF-8) or its bytes."""
    out: dict[str, str | bytes] = {}
    for char in ODD_BREAKS:
        tag = f"{ord(char):04x}"
        above = f"# a comment with a {char} in it\nNOTE = 'a {char} in a string'\n"
        if char == "\x0c":
            above += "\x0c\n"  # a form feed may stand on a line of its own
        out[f"above_{tag}"] = module(f"Above{tag}", above=above)
        out[f"inside_{tag}"] = module(
            f"Inside{tag}",
            last=f"\n    def helper(self):  # {char}\n        return '{char}'  # {char}{char}\n",
        )
    out["formfeed_between_methods"] = module("FormFeedBetween").replace(
        "\n    def forward", "\x0c\n    def forward"
    )
    out["formfeed_indent"] = module("FormFeedIndent", last="\n\x0c    def helper(self):\n        return 1\n")
    # One-line bodies over a base outside the model files (so the forwards must go into them, not the base).
    base = "from minisgl.layers.wrapper_base import WrapperBase\n"
    out["one_line_body"] = f"{base}\n\nclass OneLine(WrapperBase): pass\n\n\nx = 1\n"
    out["one_line_body_comment"] = f"{base}\n\nclass OneLineC(WrapperBase):   pass  # a note\n"
    out["one_line_body_two_statements"] = f"{base}\n\nclass OneLineS(WrapperBase): x = 1; y = 2\n"
    out["one_line_body_eof_no_newline"] = f"{base}\n\nclass OneLineE(WrapperBase): ..."
    out["one_line_body_crlf_tabs"] = f"{base}\n\nif True:\n\tclass OneLineT(WrapperBase): pass\n".replace("\n", "\r\n")
    # Over a base in the same file: the base gets the forwards, the one-line subclass inherits them.
    out["one_line_subclass_of_local_base"] = f"{IMPORT}\n\n{body('LocalBase')}\n\nclass OneLineL(LocalBase): pass\n"
    out["semicolon_last"] = module("Semicolon", last="    z = 1;\n")
    out["backslash_semicolon_last"] = module("BackslashSemi", last="    z = 1 + \\\n        2;\n")
    out["backslash_to_blank_line"] = module("BackslashBlank", last="    z = (1 +\n        2) ; \\\n\n")
    out["backslash_in_last_method"] = module(
        "BackslashMethod", last="\n    def helper(self):\n        return 1 \\\n            + 2;\n"
    )
    out["one_line_last_method"] = module("OneLineMethod", last="\n    def helper(self): return 1; \\\n\n")
    out["decorated_class"] = (
        f"{IMPORT}\n\ndef register(cls):\n    return cls\n\n\n@register\n@register\n{body('Decorated')}"
    )
    out["decorated_last_method"] = module(
        "DecoratedLast", last="\n    @staticmethod\n    @functools.lru_cache\n    def helper(x):\n        return x\n"
    ).replace(IMPORT, "import functools\n\n" + IMPORT)
    out["tabs"] = module("Tabs", indent="\t")
    out["two_spaces"] = module("TwoSpaces", indent="  ")
    out["crlf"] = module("Crlf").replace("\n", "\r\n")
    out["cr"] = module("CarriageReturn").replace("\n", "\r")
    out["bom"] = BOM + module("Bom").encode()
    out["bom_crlf"] = BOM + module("BomCrlf").replace("\n", "\r\n").encode()
    out["latin1_cookie"] = (
        "# -*- coding: latin-1 -*-\n" + module("Latin1", above="# café, naïve, señor\n")
    ).encode("latin-1")
    out["non_ascii"] = module(
        "NonAscii", above="# 模型 🚀\nGREETING = '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🚀'\n",
        last="\n    def größe(self):  # 🚀 ü\n        return '🚀𝔘'  # 模型\n",
    ).replace("class NonAscii:", "class NonAscii:  # 🚀 模型")
    out["nested_class_last"] = module(
        "NestedLast", last="\n    class Config:\n        size = 1\n\n        def get(self):\n            return 1\n"
    )
    out["type_checking"] = module(
        "TypeChecking",
        above="from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from typing import Any\n",
        last="\n    def helper(self) -> 'Any':\n        return None\n",
    ).replace(IMPORT, "from __future__ import annotations\n\n" + IMPORT)
    out["eof_newline"] = f"{IMPORT}\n\n{body('EofNewline')}"
    out["eof_no_newline"] = f"{IMPORT}\n\n{body('EofNoNewline')}".rstrip("\n")
    out["eof_comment_no_newline"] = f"{IMPORT}\n\n{body('EofComment')}    # the end"
    out["trailing_comment_deeper"] = module("DeeperComment", last="        # still the method's\n")
    out["docstring_last_method"] = module("DocLast", last='\n    def helper(self):\n        """Only \x0c doc."""\n')
    out["async_last"] = module("AsyncLast", last="\n    async def helper(self):\n        return 1\n")
    out["multiline_string_last"] = module(
        "StringLast", last='\n    TEXT = """line\x0c\n\u2028still the string\n\x85"""\n'
    )
    out["blank_lines_with_spaces"] = module("SpacesBlank", last="    \n\t\n    z = 1\n  \n")
    out["two_wrappers"] = f"{IMPORT}\n\n{body('First')}\n\n{body('Second')}"
    out["class_under_if"] = f"{IMPORT}\nimport sys\n\nif sys.version_info >= (3,):\n" + "".join(
        "    " + line if line.strip() else line for line in body("UnderIf").splitlines(keepends=True)
    )
    deep = "1 if config else " * 2500 + "0"
    out["deep_code"] = module("Deep").replace(
        "self.language_model = LlamaForCausalLM(config)",
        f"self.language_model = LlamaForCausalLM(config)\n        self.depth = {deep}",
    )
    out["nested_one_line_last"] = module("NestedOneLine", last="\n    class Config: pass\n")
    out["compound_one_line_last"] = module("CompoundOneLine", last="    if True: z = 1\n")
    out["try_last"] = module("TryLast", last="    try:\n        import json\n    except ImportError:\n        json = None\n")
    out["multi_line_header"] = module("MultiHeader").replace(
        "class MultiHeader:", "@(lambda cls: cls)\nclass MultiHeader(\n    object,  # a base\n):"
    )
    out["mixed_endings"] = module("Mixed").replace("batch):\n", "batch):\r\n")
    out["eight_space_indent"] = module("EightSpaces", indent="        ")
    out["unicode_class_name"] = module("Ωmega")
    out["long_line"] = module("LongLine", last=f"    TABLE = '{'x' * 20000}'\n")
    out["deep_in_other_method"] = module("DeepOther", last=f"\n    def table(self, config):\n        return {deep}\n")
    calls = "f(" * 190 + ")" * 190  # within CPython's 200 brackets, past what libcst's visitors get through
    out["deep_nested_calls"] = module("DeepCalls", last=f"\n    def table(self, f):\n        return {calls}\n")
    return out


VARIANTS = _variants()
# Nested past what the stub generator can edit: a message and a non-zero exit, the others still fixed.
REFUSED = {"deep_code", "deep_in_other_method", "deep_nested_calls"}


def as_text(data: str | bytes) -> str:
    """What the analysis (and an editor) reads: decoded by the file's cookie, without a BOM."""
    if isinstance(data, str):
        return data
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding).removeprefix("\ufeff")


def corpus(tmp: Path) -> Path:
    """The demo with every variant as a model file; every top-level model class is checked (no EntryClass
    needed, so a class can end the file)."""
    root = tmp / "corpus"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", ".spec-contract-cache"))
    (root / "pyproject.toml").write_text('[tool.spec-contract]\nentry-class-variable = ""\n')
    (root / "minisgl" / "layers").mkdir()
    (root / "minisgl" / "layers" / "__init__.py").write_text("")
    (root / "minisgl" / "layers" / "wrapper_base.py").write_text(
        f"{IMPORT}\n\nclass WrapperBase:\n    def __init__(self, config):\n        self.language_model = LlamaForCausalLM(config)\n"
    )
    for name, data in VARIANTS.items():
        (root / "minisgl" / "models" / f"v_{name}.py").write_bytes(data if isinstance(data, bytes) else data.encode())
    return root


LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # lines as Python and the LSP count them


def only_adds(original: str, fixed: str) -> bool:
    """The test's own oracle: every original line is still there, in order; the one change a fix may make to
    a line is to split ``class W(Base): pass`` into two (the non-blank characters stay, in order)."""
    old, new = LINE.findall(original), LINE.findall(fixed)
    if old and not old[-1].endswith(("\n", "\r")):  # the last line may gain a line break
        old[-1] += "\r\n" if "\r\n" in fixed else "\r" if "\r" in fixed and "\n" not in fixed else "\n"
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "insert" or op == "equal":
            continue
        if op == "delete":
            return False
        before, after = "".join(old[i1:i2]).split(), "".join(new[j1:j2]).split()
        squeezed = iter("".join(after))
        if not all(c in squeezed for c in "".join(before)):  # a subsequence test
            return False
    return True


def endings(text: str) -> set[str]:
    return set(re.findall(r"\r\n|\r|\n", text))


def assert_safe(name: str, original: str | bytes, fixed_data: str | bytes, who: str) -> str:
    """The fixed file parses, only adds lines, keeps its BOM, encoding and line ending style."""
    fixed = as_text(fixed_data)
    if isinstance(fixed_data, bytes):
        ast.parse(fixed_data)  # in the file's own encoding
        assert fixed_data.startswith(BOM) == (isinstance(original, bytes) and original.startswith(BOM)), (who, name)
    ast.parse(fixed)
    assert only_adds(as_text(original), fixed), f"{who}: {name}: lines changed:\n{fixed}"
    assert endings(fixed) <= endings(as_text(original)) or not endings(as_text(original)), (who, name)
    return fixed


def spec_contract(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spec_contract", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def findings_by_file(root: Path) -> dict[str, list[dict]]:
    result = spec_contract("check", ".", "--format", "json", "--no-cache", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    out: dict[str, list[dict]] = {}
    for finding in json.loads(result.stdout)["findings"]:
        out.setdefault(Path(finding["path"]).stem, []).append(finding)
    return out


def test_every_variant_has_findings_to_fix(tmp_path):
    """The corpus is not vacuous: the check reports missing forwards in every variant."""
    before = findings_by_file(corpus(tmp_path))
    assert sorted(n for n in VARIANTS if not before.get(f"v_{n}")) == []


def test_check_fix_fixes_every_variant_safely_or_refuses_it_with_a_message(tmp_path):
    root = corpus(tmp_path)
    # every code asked for: the variants' draft-only (warning) forwards are fixed too, so each checks clean
    result = spec_contract("check", ".", "--fix", "--select", EVERY_CODE, "--no-cache", cwd=root)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr  # a refused variant: the fix asked for was not all made
    refused = {m.group(1) for m in re.finditer(r"not fixed: minisgl/models/v_(\w+)\.py: .+", result.stderr)}
    assert refused == REFUSED, result.stderr
    written = int(re.search(r"Fixed (\d+) file", result.stdout).group(1))
    assert written == len(VARIANTS) - len(REFUSED) + 1  # and the demo's own llava.py

    after = findings_by_file(root)
    for name, original in VARIANTS.items():
        data = (root / "minisgl" / "models" / f"v_{name}.py").read_bytes()
        if name in REFUSED:
            assert data == (original if isinstance(original, bytes) else original.encode()), name
            assert after.get(f"v_{name}"), name
            continue
        fixed = assert_safe(name, original, data if isinstance(original, bytes) else data.decode(), "check --fix")
        assert not after.get(f"v_{name}"), (name, after.get(f"v_{name}"))
        if name.startswith("one_line_body"):  # the body was moved onto its own line to take the forwards
            assert re.search(r"\(WrapperBase\):(\r\n|\n)\s+\S", fixed), fixed
    assert not list(root.rglob(".spec-contract-*.tmp"))


def test_check_fix_refuses_a_read_only_file_and_fixes_the_others(tmp_path):
    root = corpus(tmp_path)
    locked = root / "minisgl" / "models" / "v_crlf.py"
    locked.chmod(0o444)
    result = spec_contract("check", "minisgl/models/v_crlf.py", "minisgl/models/v_tabs.py", "--fix", "--no-cache",
                           cwd=root)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1
    assert re.search(r"not fixed: .*v_crlf\.py: it is read-only", result.stderr), result.stderr
    assert locked.read_bytes() == VARIANTS["crlf"].encode()
    assert "get_embed_and_head" in (root / "minisgl" / "models" / "v_tabs.py").read_text()
    assert "Fixed 1 file: added 2 members to 1 class." in result.stdout, result.stdout


def test_check_fix_reports_a_file_it_cannot_read_back_and_leaves_no_temporary_file(tmp_path):
    """The file vanishes between the analysis and the write (an OSError, even for root)."""
    from spec_contract import fixing

    path = tmp_path / "gone.py"
    with pytest.raises(fixing.Refused, match="cannot read it"):
        fixing.write_file(str(path), "x = 1\n", "x = 1\ny = 2\n")
    assert list(tmp_path.iterdir()) == []


def test_check_fix_fixes_a_file_whose_name_is_as_long_as_the_file_system_allows(tmp_path):
    root = corpus(tmp_path)
    long = root / "minisgl" / "models" / f"v_{'x' * 240}.py"
    (root / "minisgl" / "models" / "v_tabs.py").rename(long)
    result = spec_contract("check", ".", "--fix", "--no-cache", cwd=root)
    assert "v_xxx" not in result.stderr, result.stderr
    assert_safe("tabs", VARIANTS["tabs"], long.read_text(), "check --fix")
    assert "get_embed_and_head" in long.read_text()
    assert not list(root.rglob("*.tmp"))


def test_check_fix_writes_a_symlinked_file_where_it_lives(tmp_path):
    root = corpus(tmp_path)
    real = tmp_path / "elsewhere.py"
    real.write_text(VARIANTS["tabs"])
    link = root / "minisgl" / "models" / "v_tabs.py"
    link.unlink()
    link.symlink_to(real)
    result = spec_contract("check", ".", "--fix", "--no-cache", cwd=root)
    assert "v_tabs.py" not in result.stderr, result.stderr
    assert link.is_symlink()
    assert_safe("tabs", VARIANTS["tabs"], real.read_text(), "check --fix")
    assert "get_embed_and_head" in real.read_text()


# --- the server's code actions -----------------------------------------------------------------------------


def apply_lsp_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """Apply LSP edits as an editor does: lines end at \\r\\n, \\r or \\n only (LSP 3.17), columns in the
    negotiated encoding, every position taken from the text before the edits."""
    lines = LINE.findall(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line].rstrip("\r\n")
        if encoding == "utf-32":
            column = position.character
        else:
            unit, width = ("utf-8", 1) if encoding == "utf-8" else ("utf-16-le", 2)
            column = len(line.encode(unit)[: position.character * width].decode(unit))
        return starts[position.line] + min(column, len(line))

    located = sorted(((offset(e.range.start), offset(e.range.end), i, e.new_text) for i, e in enumerate(edits)),
                     reverse=True)
    for start, end, _, new_text in located:
        text = text[:start] + new_text + text[end:]
    return text


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client),
    params=["emacs-29.1", "vscode-1.139.1"],  # eager edits in utf-32, resolved edits in utf-16
)
async def client(lsp_client: LanguageClient, request):
    lsp_client.editor = request.param
    lsp_client.init_result = None
    yield lsp_client
    if lsp_client.init_result is not None:
        await lsp_client.shutdown_session()


def encoding_of(client: LanguageClient) -> str:
    encoding = client.init_result.capabilities.position_encoding
    return str(getattr(encoding, "value", encoding))


async def edit_of(client: LanguageClient, action: types.CodeAction) -> types.WorkspaceEdit | None:
    if action.edit is None and action.data is not None:
        action = await client.code_action_resolve_async(action)
    return action.edit


async def test_code_actions_fix_every_variant_safely_or_leave_it_with_its_other_actions(client, tmp_path):
    root = corpus(tmp_path)
    await initialize(client, [root])
    encoding = encoding_of(client)
    fixed_count = 0
    for name, original in VARIANTS.items():
        path = root / "minisgl" / "models" / f"v_{name}.py"
        text = as_text(original)
        uri = open_document(client, path, text)
        everything = await code_actions(client, uri, text)
        titles = [a.title for a in everything or []]
        assert any(t.startswith("Ignore SC001") for t in titles), (name, titles)
        fix_all = [a for a in everything if a.kind == FIX_ALL]
        edit = await edit_of(client, fix_all[0]) if fix_all else None
        if name in REFUSED:
            assert edit is None, name  # no action, or one that resolves to nothing: the file is left alone
            assert await diagnostics_now(client, uri), name  # but the wrapper is checked, not dropped
            continue
        assert edit is not None, (name, titles)
        fixed = apply_lsp_edits(text, edits_for(edit, uri), encoding)
        assert_safe(name, text, fixed, client.editor)
        if name.startswith("one_line_body"):
            assert re.search(r"\(WrapperBase\):(\r\n|\n)\s+\S", fixed), fixed
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
            )
        )
        assert await diagnostics_now(client, uri) == [], name
        fixed_count += 1
    assert fixed_count == len(VARIANTS) - len(REFUSED)
    tracebacks = [m.message for m in client.log_messages if "Traceback" in m.message]
    assert tracebacks == []
