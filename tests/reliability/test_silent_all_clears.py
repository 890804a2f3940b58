"""A check that checked nothing never says all is well (issue 24, item 4).

``select = ""`` reported nothing and exited 0; ``model-files`` globs that match no file printed "All checked
wrappers forward their contract"; a registered nested class (``EntryClass = Outer.W``) was never checked; and a
class whose name Python normalises (``class 𝒲Llava`` defines ``WLlava``, NFKC) was missed by the command, while
the server put its diagnostic on the ``class`` keyword and had no hover for the name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from framing import RawServer
from spec_tree import LLAMA, check, wrapper, write_tree

NESTED = """\
from sglang.srt.models.llama import LlamaForCausalLM


class Outer:
    class W:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM()


EntryClass = Outer.W
"""
SCRIPT_W = "\U0001d4b2"  # MATHEMATICAL SCRIPT CAPITAL W: NFKC makes it W


def findings(result) -> list[tuple[str, str, str]]:
    return sorted((f["class"], f["method"], f["code"]) for f in json.loads(result.stdout)["findings"])


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path, {"srt/models/kimi.py": wrapper("Kimi")})


@pytest.mark.parametrize("select", ['select = ""', "select = []", 'select = ","'])
def test_a_select_that_names_no_code_is_an_error(tree, select):
    (tree / "pyproject.toml").write_text(f"[tool.spec-contract]\n{select}\n")
    result = check(tree)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "'select' names no code" in result.stderr


def test_an_empty_select_option_is_an_error_too(tree):
    result = check(tree, "--select", "")
    assert result.returncode == 2 and "--select names no code" in result.stderr, result.stderr


def test_model_globs_that_match_nothing_say_so_and_fail(tree):
    (tree / "pyproject.toml").write_text('[tool.spec-contract]\nmodel-files = ["no/such/**/*.py"]\n')
    result = check(tree)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "no model file matches the 'model-files' globs" in result.stderr
    assert "All checked wrappers forward" not in result.stdout
    assert result.stdout.startswith("No model class was checked")


def test_model_files_that_register_nothing_say_so_and_fail(tree):
    (tree / "srt/models/llama.py").write_text(LLAMA.replace("EntryClass = LlamaForCausalLM\n", ""))
    (tree / "srt/models/kimi.py").write_text(wrapper("Kimi").replace("EntryClass = Kimi\n", ""))
    result = check(tree)
    assert result.returncode == 2 and "registers a class in 'EntryClass'" in result.stderr, result.stderr


def test_a_path_without_classes_passes_and_says_nothing_was_checked_there(tree):
    """Narrowing to files with no model class (a pre-commit run over a helper) is no configuration error."""
    (tree / "srt/utils.py").write_text("def helper():\n    return 1\n")
    result = check(tree, "srt/utils.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No model class was checked"), result.stdout


def test_a_registered_nested_class_is_checked(tree):
    (tree / "srt/models/nested.py").write_text(NESTED)
    reported = json.loads(check(tree, "--format", "json").stdout)["findings"]
    assert ("srt/models/nested.py", 5, "W", "get_embed_and_head", "SC001") in [
        (f["path"], f["line"], f["class"], f["method"], f["code"]) for f in reported]


def test_a_class_defined_twice_keeps_only_what_its_last_definition_holds(tree):
    (tree / "srt/models/nested.py").write_text(NESTED.replace("\n\nEntryClass", "\n\nclass Outer:\n    pass\n\n\n"
                                                              "EntryClass"))
    reported = json.loads(check(tree, "--format", "json").stdout)["findings"]
    assert reported and not [f for f in reported if f["path"] == "srt/models/nested.py"]


def test_a_name_python_normalises_is_the_name_the_registry_uses(tree):
    source = wrapper(f"{SCRIPT_W}Llava").replace(f"EntryClass = {SCRIPT_W}Llava", "EntryClass = WLlava")
    (tree / "srt/models/llava.py").write_text(source)
    result = check(tree, "--format", "json")
    reported = [f for f in json.loads(result.stdout)["findings"] if f["class"].endswith("WLlava")]
    assert {f["method"] for f in reported} >= {"get_embed_and_head"}
    line = source.splitlines()[3]
    first = line.index(SCRIPT_W) + 1
    assert {(f["line"], f["column"], f["end_column"]) for f in reported} == {(4, first, first + len(f"{SCRIPT_W}Llava"))}


def test_the_server_puts_the_diagnostic_and_the_hover_on_the_written_name(tree, tmp_path):
    source = wrapper(f"{SCRIPT_W}Llava")
    path = tree / "srt/models/llava.py"
    path.write_text(source)
    start = source.splitlines()[3].index(SCRIPT_W)  # code points; the server speaks UTF-16 here
    end16 = start + len(f"{SCRIPT_W}Llava".encode("utf-16-le")) // 2
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "server-cache")}
    with RawServer(cwd=tree, env=env) as server:
        server.initialize(tree.parent)
        server.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "python", "version": 1, "text": source}})
        published = server.wait_for(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == path.as_uri()
            and any(d.get("code") == "SC001" for d in m["params"]["diagnostics"]), "SC001 for the wrapper")
        ranges = {(d["range"]["start"]["line"], d["range"]["start"]["character"], d["range"]["end"]["character"])
                  for d in published["params"]["diagnostics"]}
        assert ranges == {(3, start, end16)}
        hover = server.call("textDocument/hover", {"textDocument": {"uri": path.as_uri()},
                                                   "position": {"line": 3, "character": start + 3}})
        assert hover.get("result") and "get_embed_and_head" in json.dumps(hover["result"])
        assert "result" in server.call("shutdown")
        server.notify("exit")
