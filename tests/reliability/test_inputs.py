"""Hostile inputs the checked tree or the reader of the output chooses: special files named ``*.py``, file
names that carry terminal escapes or GitHub workflow commands, a byte order mark in an editor buffer, a class
defined twice, a reader that leaves the pipe early (issue 14, items 8, 15 and 16).

Each test runs the real command in a subprocess (a hang, a traceback or a wrong exit code is what CI would
see) or the real server through pytest-lsp.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))  # the end-to-end tests' client helpers
from lsp_harness import diagnostics_now, initialize, make_client, open_document, until  # noqa: E402
from spec_contract.engine.config import load_config  # noqa: E402
from spec_contract.engine.project import Project  # noqa: E402

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo"
WRAPPER = "minisgl/models/llava.py"
DEMO_FINDINGS = [("get_embed_and_head", 6), ("set_eagle3_layers_to_capture", 6)]  # what the demo reports


def run(*args: str, cache: Path, timeout: float = 120, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The command; from the checked tree (``cwd``) where file names are shown, as a CI job runs it."""
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(cache), **(env or {})}
    return subprocess.run([sys.executable, "-m", "spec_contract", *args], capture_output=True, env=env,
                          timeout=timeout, cwd=cwd)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def reported(root: Path) -> list[tuple[str, int]]:
    analysis = Project(root, load_config(root), use_cache=False).analyze()
    return [(f.member, f.span.line + 1) for f in analysis.findings]


# item 8: special files -------------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_py_is_skipped_not_read(demo, tmp_path):
    """Opening a FIFO for reading blocks until a writer comes: the run would never end."""
    os.mkfifo(demo / "minisgl/models/pipe.py")
    os.mkfifo(demo / "minisgl/speculative/pipe_worker.py")
    result = run("check", str(demo), "--format", "json", cache=tmp_path / "cache", timeout=60)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert [(f["method"], f["line"]) for f in report["findings"]] == DEMO_FINDINGS
    assert report["stats"]["files_skipped"] == {"not-a-file": 2}
    text = run("check", str(demo), "--no-cache", cache=tmp_path / "cache", timeout=60)
    assert b"Skipped files: 2 not-a-file." in text.stdout


# item 15: output injection -----------------------------------------------------------------------------
HOSTILE_NAMES = [
    "evil\n::warning file=x::injected.py",
    "carriage\r::error::x.py",
    "comma,colon:percent%25.py",
    "esc\x1b[2J\x1b]0;title\x07.py",
    "bidi\u202eyp.py",
]


def hostile_tree(demo: Path) -> list[str]:
    """The demo's wrapper copied under each hostile name; returns their paths relative to the root."""
    names = []
    for name in HOSTILE_NAMES:
        shutil.copy(demo / WRAPPER, demo / "minisgl/models" / name)
        names.append(f"minisgl/models/{name}")
    return names


def unescape_property(value: str) -> str:
    """What GitHub's runner reads from an escaped property value."""
    for escaped, char in (("%3A", ":"), ("%2C", ","), ("%0D", "\r"), ("%0A", "\n"), ("%25", "%")):
        value = value.replace(escaped, char)
    return value


def test_github_annotations_escape_file_names_and_messages(demo, tmp_path):
    names = hostile_tree(demo)
    summary = tmp_path / "summary.md"
    result = run("check", str(demo), "--format", "github", "--no-cache", cache=tmp_path / "cache", cwd=demo,
                 env={"GITHUB_WORKSPACE": str(demo), "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 1, result.stderr
    lines = result.stdout.decode("utf-8").removesuffix("\n").split("\n")  # as the runner splits its log
    findings = 2 * (len(names) + 1)
    # GitHub shows 10 error annotations a step: ten, then one notice for the rest; no line was added by a name
    assert len(lines) == 10 + 1 and findings > 10
    assert lines[-1] == (f"::notice title=spec-contract::{findings - 10} more error findings (GitHub shows 10 error "
                         f"annotations per step) not annotated; the job's summary lists all {findings}")
    files = []
    for line in lines[:-1]:
        assert line.startswith("::error file="), line
        properties, separator, message = line[2:].partition("::")
        assert separator and "::" not in message and "\r" not in line
        fields = dict(p.split("=", 1) for p in properties.split(" ", 1)[1].split(","))
        assert set(fields) == {"file", "line", "col", "endColumn", "title"}
        files.append(unescape_property(fields["file"]))
    # Newlines, commas, colons and percents come back as they are; terminal controls stay visible escapes.
    shown = {name.replace("\x1b", "\\x1b").replace("\x07", "\\x07").replace("\u202e", "\\u202e") for name in names}
    assert set(files) <= shown | {WRAPPER} and len(set(files)) == 5
    # The summary's table has a row per finding, each on one line, the names shown rather than obeyed.
    rows = [row for row in summary.read_text().splitlines() if row.startswith("| error |")]
    assert len(rows) == findings
    assert all(row.isprintable() and row.count(" | ") == 3 for row in rows), rows
    assert {row.split(" | ")[2].rpartition(":")[0] for row in rows} == {
        name.replace("\n", "\\x0a").replace("\r", "\\x0d") for name in shown | {WRAPPER}}


def test_text_report_shows_control_characters_as_escapes(demo, tmp_path):
    names = hostile_tree(demo)
    for command in (["check", "--no-cache"], ["contract", "--no-cache"]):
        result = run(*command, str(demo), cache=tmp_path / "cache", cwd=demo)
        assert result.returncode in (0, 1), result.stderr
        out = result.stdout.decode("utf-8")
        assert not any(c in out for c in "\x1b\x07\r\u202e"), out
        assert all(line.isprintable() for line in out.splitlines())
    out = run("check", "--no-cache", str(demo), cache=tmp_path / "cache", cwd=demo).stdout.decode("utf-8")
    assert "minisgl/models/evil\\x0a::warning file=x::injected.py:6:7: error SC001" in out
    assert "minisgl/models/esc\\x1b[2J\\x1b]0;title\\x07.py:6:7: error SC001" in out
    # a finding's first line starts at the margin, its continuations are indented: no name started a line
    assert len([line for line in out.splitlines() if not line.startswith(" ")]) == 2 * (len(names) + 1) + 2


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_formats_carry_file_names_exactly(demo, tmp_path, fmt):
    names = hostile_tree(demo)
    result = run("check", str(demo), "--format", fmt, "--no-cache", cache=tmp_path / "cache")
    assert result.returncode == 1, result.stderr
    out = result.stdout.decode("ascii")  # every other character is a JSON escape
    report = json.loads(out)
    if fmt == "json":
        paths = {f["path"] for f in report["findings"]}
    else:
        paths = {loc["physicalLocation"]["artifactLocation"]["uri"]
                 for r in report["runs"][0]["results"] for loc in r["locations"]}
    assert paths == set(names) | {WRAPPER}


def test_a_file_name_that_is_not_utf8_is_reported_not_a_crash(demo, tmp_path):
    """Such a name reaches Python as lone surrogates, which ``print`` cannot encode."""
    shutil.copy(demo / WRAPPER, os.path.join(os.fsencode(demo / "minisgl/models"), b"latin1-\xe9.py"))
    result = run("check", str(demo), "--no-cache", cache=tmp_path / "cache", cwd=demo)
    assert result.returncode == 1 and not result.stderr
    assert b"minisgl/models/latin1-\\udce9.py:6:7: error SC001" in result.stdout


# item 16: smaller ones -------------------------------------------------------------------------------
def test_a_class_defined_twice_is_checked_as_its_last_definition(demo):
    """The runtime uses the last ``class`` statement of a name; the first is dead code."""
    wrapper = (demo / WRAPPER).read_text()
    head, _, tail = wrapper.partition("class LlavaForConditionalGeneration")
    forwarding = (
        "class LlavaForConditionalGeneration:\n"
        "    def __init__(self, config):\n        self.language_model = LlamaForCausalLM(config.text_config)\n\n"
        "    def get_embed_and_head(self):\n        return self.language_model.get_embed_and_head()\n\n"
        "    def set_embed_and_head(self, embed, head):\n"
        "        return self.language_model.set_embed_and_head(embed, head)\n\n"
        "    def set_eagle3_layers_to_capture(self, ids=None):\n"
        "        return self.language_model.set_eagle3_layers_to_capture(ids)\n\n\n")
    (demo / WRAPPER).write_text(head + forwarding + "class LlavaForConditionalGeneration" + tail)
    lines = (demo / WRAPPER).read_text().splitlines()
    last = max(i + 1 for i, line in enumerate(lines) if line.startswith("class LlavaForConditionalGeneration"))
    assert last > 6
    assert reported(demo) == [(member, last) for member, _ in DEMO_FINDINGS]
    # And the other way round: a forwarding last definition is clean, whatever came before it.
    (demo / WRAPPER).write_text(head + "class LlavaForConditionalGeneration" + tail + "\n\n" + forwarding
                                + "EntryClass = LlavaForConditionalGeneration\n")
    assert reported(demo) == []


def test_fix_adds_the_forwards_to_the_last_definition_of_a_class(demo, tmp_path):
    wrapper = (demo / WRAPPER).read_text()
    head, _, tail = wrapper.partition("class LlavaForConditionalGeneration")
    dead = "class LlavaForConditionalGeneration:\n    pass\n\n\n"
    (demo / WRAPPER).write_text(head + dead + "class LlavaForConditionalGeneration" + tail)
    assert run("check", str(demo), "--fix", "--no-cache", cache=tmp_path / "cache").returncode == 0  # fixed
    fixed = (demo / WRAPPER).read_text()
    assert fixed.startswith(head + dead + "class LlavaForConditionalGeneration")  # the dead one untouched
    assert "def get_embed_and_head" in fixed and reported(demo) == []


def test_a_class_defined_twice_in_an_out_of_tree_package_is_checked_once(tmp_path, monkeypatch):
    """Without a registry every class of an out-of-tree package is a model: the name defined twice is one
    class (the last definition), checked once."""
    engine = tmp_path / "site" / "sglang"
    shutil.copytree(DEMO / "minisgl", engine, ignore=shutil.ignore_patterns("__pycache__"))
    for path in engine.rglob("*.py"):
        path.write_text(path.read_text().replace("minisgl", "sglang"))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    wrapper = ("from sglang.models.llama import LlamaForCausalLM\n\n\n"
               "class MyVLM:\n    def __init__(self, config):\n"
               "        self.language_model = LlamaForCausalLM(config)\n\n"
               "    def get_embed_and_head(self):\n        return self.language_model.get_embed_and_head()\n\n\n")
    (package / "vlm.py").write_text(wrapper + wrapper.split("\n\n\n", 1)[1].split("    def get_embed")[0])
    analysis = Project(package, load_config(package), python=sys.executable, use_cache=False).analyze()
    assert [(f.member, f.span.line + 1) for f in analysis.findings if f.class_name.endswith("MyVLM")] == [
        ("get_embed_and_head", 12), ("set_eagle3_layers_to_capture", 12), ("set_embed_and_head", 12)]


@pytest.mark.parametrize("command", ["contract", "check"])
def test_a_reader_that_leaves_early_ends_the_run_quietly(demo, tmp_path, command):
    """``spec-contract contract | head``: the reader closes the pipe before the output is written."""
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "spec_contract", command, str(demo), "--no-cache"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdout.close()  # before the interpreter has even started: the first write finds no reader
    _, err = proc.communicate(timeout=120)
    assert err == b""
    assert proc.returncode == (0 if command == "contract" else 1)


SERVER_COMMAND = [sys.executable, "-m", "spec_contract", "serve"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client))
async def neovim(lsp_client: LanguageClient):
    lsp_client.editor = "neovim-0.11"
    lsp_client.init_result = None
    yield lsp_client
    if lsp_client.init_result is not None:
        await lsp_client.shutdown_session()


async def test_a_buffer_that_starts_with_a_byte_order_mark_gets_diagnostics(neovim, tmp_path):
    demo = tmp_path / "demo"
    shutil.copytree(DEMO, demo, ignore=shutil.ignore_patterns("__pycache__"))
    if hasattr(os, "mkfifo"):  # a FIFO in the workspace does not block the engine thread either
        os.mkfifo(demo / "minisgl/models/pipe.py")
    await initialize(neovim, [demo])
    text = (demo / WRAPPER).read_text()
    uri = open_document(neovim, demo / WRAPPER, "\ufeff" + text)
    with_bom = await diagnostics_now(neovim, uri)
    assert sorted((d.data["member"], d.range.start.line + 1) for d in with_bom) == DEMO_FINDINGS


async def test_the_server_says_when_it_could_not_read_a_model_file(neovim, tmp_path):
    demo = tmp_path / "demo"
    shutil.copytree(DEMO, demo, ignore=shutil.ignore_patterns("__pycache__"))
    os.symlink(tmp_path / "nowhere.py", demo / "minisgl/models/gone.py")
    await initialize(neovim, [demo])
    uri = open_document(neovim, demo / WRAPPER)
    assert len(await diagnostics_now(neovim, uri)) == len(DEMO_FINDINGS)
    await until(lambda: any("could not read 1 path(s)" in m.message and "minisgl/models/gone.py" in m.message
                            for m in neovim.messages), "a message naming the unreadable file")


# item 7: the engine's package under another name -----------------------------------------------------------
ENGINE_TREE = {
    "__init__.py": "",
    "srt/__init__.py": "",
    "srt/speculative/__init__.py": "",
    "srt/speculative/eagle_worker.py": """\
from sglang.srt.managers.tp_worker import TpModelWorker
from sglang.srt.models.llama import LlamaForCausalLM


class EAGLEWorker(TpModelWorker):
    def __init__(self, target_worker, draft_model_runner):
        self.target_worker = target_worker
        self.draft_model_runner = draft_model_runner
        embed, head = self.target_worker.model_runner.model.get_embed_and_head()
        self.draft_model_runner.model.set_embed_and_head(embed, head)
""",
    "srt/managers/__init__.py": "",
    "srt/managers/tp_worker.py": "class TpModelWorker:\n    pass\n",
    "srt/models/__init__.py": "",
    "srt/models/llama.py": """\
class LlamaForCausalLM:
    def get_embed_and_head(self):
        return None, None

    def set_embed_and_head(self, embed, head):
        pass


EntryClass = LlamaForCausalLM
""",
    "srt/models/llava.py": """\
from sglang.srt.models.llama import LlamaForCausalLM


class LlavaForConditionalGeneration:
    def __init__(self, config):
        self.language_model = LlamaForCausalLM(config)


EntryClass = LlavaForConditionalGeneration
""",
}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def findings_and_contract(root: Path) -> tuple:
    """Findings and contract with paths relative to the engine package's folder, whatever its name."""
    analysis = Project(root, load_config(root), use_cache=False).analyze()
    package = next(p for p in root.rglob("speculative")).parents[1]
    rel = lambda path: Path(path).relative_to(package).as_posix()  # noqa: E731
    return ([(f.code, rel(f.path), f.span, f.member, f.severity, tuple((rel(s.path), s.span.line) for s in f.call_sites))
             for f in analysis.findings],
            [(e.role, e.member, e.required) for e in analysis.contract.entries], analysis.notes)


def test_the_engine_package_answers_for_its_imports_whatever_its_folder_is_called(tmp_path):
    reference = findings_and_contract(write(tmp_path / "sglang", ENGINE_TREE))
    assert [(code, member) for code, _, _, member, _, _ in reference[0]] == [
        ("SC001", "get_embed_and_head"), ("SC005", "set_embed_and_head")]
    assert reference[2] == ()
    renamed = write(tmp_path / "renamed" / "sglang_v059", ENGINE_TREE)
    write(tmp_path / "vendored" / "third_party" / "sglang", ENGINE_TREE)
    (tmp_path / "vendored" / "third_party" / "__init__.py").write_text("")
    assert findings_and_contract(renamed) == reference
    assert findings_and_contract(tmp_path / "vendored") == reference


def test_most_engine_imports_unresolved_is_said(tmp_path):
    """Only the workers and the models copied: the engine's other modules are not in the tree."""
    worker = ENGINE_TREE["srt/speculative/eagle_worker.py"]
    imports = "".join(f"from sglang.srt.layers.part{i} import Part{i}\n" for i in range(5))
    root = write(tmp_path / "partial", {**ENGINE_TREE, "srt/speculative/eagle_worker.py": imports + worker})
    found, _, notes = findings_and_contract(root)
    assert [member for _, _, _, member, _, _ in found] == ["get_embed_and_head", "set_embed_and_head"]
    assert len(notes) == 1 and notes[0].startswith("5 of 7 imports of the engine package `sglang`")
    result = run("check", str(root), "--no-cache", cache=tmp_path / "cache")
    assert result.returncode == 1
    assert result.stderr.decode().startswith("spec-contract: warning: 5 of 7 imports of the engine package")


# The ways a release's model files import the engine's own classes: absolute, relative, a module alias, a module.
IMPORT_FORMS = [
    ("from sglang.srt.models.llama import LlamaForCausalLM\n", "LlamaForCausalLM"),
    ("from .llama import LlamaForCausalLM\n", "LlamaForCausalLM"),
    ("import sglang.srt.models.llama as llama_module\n", "llama_module.LlamaForCausalLM"),
    ("from sglang.srt.models import llama\n", "llama.LlamaForCausalLM"),
]
WRAPPERS = 32  # two findings each: a release's worth (SGLang 0.5.9 gives 50-odd)


def release_shaped_tree() -> dict[str, str]:
    """ENGINE_TREE grown to a release's shape: many wrappers, in nested packages too, each importing the inner
    model in one of the forms a release uses, so every finding depends on the engine package's own name."""
    files = dict(ENGINE_TREE)
    for i in range(WRAPPERS):
        statement, inner = IMPORT_FORMS[i % len(IMPORT_FORMS)]
        folder = "srt/models" if i % 2 else "srt/models/multimodal"
        if folder != "srt/models":
            statement = statement.replace("from .llama", "from ..llama")
            files[f"{folder}/__init__.py"] = ""
        files[f"{folder}/wrapper_{i}.py"] = (
            f"{statement}\n\nclass Wrapper{i}ForConditionalGeneration:\n    def __init__(self, config):\n"
            f"        self.language_model = {inner}(config)\n\n\nEntryClass = Wrapper{i}ForConditionalGeneration\n"
        )
    return files


def test_a_release_shaped_tree_copied_under_another_name_gives_the_same_findings(tmp_path):
    reference = findings_and_contract(write(tmp_path / "sglang", release_shaped_tree()))
    renamed = findings_and_contract(write(tmp_path / "copy" / "sglang_v059", release_shaped_tree()))
    assert len(reference[0]) == 2 * (WRAPPERS + 1)  # every wrapper, and the llava of ENGINE_TREE
    assert renamed == reference


# item 9: what the run could not read --------------------------------------------------------------------
def test_an_unreadable_model_file_fails_the_run_cold_and_warm(demo, tmp_path):
    """A dangling link stands for any model file that cannot be opened (root opens files whatever their
    mode); the run says what it could not read and exits 2, with a cache too."""
    os.symlink(tmp_path / "nowhere.py", demo / "minisgl/models/gone.py")
    for _ in range(2):
        result = run("check", str(demo), cache=tmp_path / "cache")
        assert result.returncode == 2, result.stderr
        assert result.stderr.decode().splitlines()[-1] == (
            "spec-contract: error: 1 path(s) the check needed could not be read; the check is incomplete")
        assert "minisgl/models/gone.py" in result.stderr.decode()
        assert b"SC001" in result.stdout  # what could be checked is still reported
    (demo / "minisgl/models/gone.py").unlink()
    assert run("check", str(demo), cache=tmp_path / "cache").returncode == 1


def without_dac_override() -> list[str] | None:
    """A command prefix under which permissions apply to this process (None: they cannot be made to)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search",
              "--inh-caps=-dac_override,-dac_read_search", "--"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "pass"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_unreadable_models_directory_fails_the_run(demo, tmp_path, fmt):
    prefix = without_dac_override()
    if prefix is None:
        pytest.skip("running as root without setpriv: every directory is readable")
    models = demo / "minisgl/models"
    models.chmod(0)
    try:
        env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "cache")}
        for _ in range(2):  # cold, then warm
            result = subprocess.run([*prefix, sys.executable, "-m", "spec_contract", "check", str(demo),
                                     "--format", fmt], capture_output=True, env=env, timeout=120)
            assert result.returncode == 2, result.stderr
            err = result.stderr.decode()
            assert "minisgl/models (Permission denied)" in err
            assert err.splitlines()[-1].startswith("spec-contract: error: 1 path(s) the check needed could not be read")
            if fmt == "json":
                assert json.loads(result.stdout)["stats"]["notes"][0].startswith("could not read 1 path(s)")
            else:
                assert b"Incomplete: 1 path(s) the check needed could not be read." in result.stdout
    finally:
        models.chmod(0o755)
    result = subprocess.run([*prefix, sys.executable, "-m", "spec_contract", "check", str(demo)],
                            capture_output=True, env=env, timeout=120)
    assert result.returncode == 1 and b"SC001" in result.stdout
