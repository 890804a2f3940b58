"""Generated programs (hypothesmith) as model files, worker files and editor buffers: whatever a file holds,
the command ends with 0, 1 or 2 and no traceback, the server answers every request, and every fix leaves a
file that parses and holds every line it held before.

Each generated program is spliced into a wrapper (or worker) the way real code surrounds it: above the
class, as method bodies, between the class and its registration. Those are the places the fix edits
next to, and the places the scanner has to read through. A splice may not parse (a generated form feed or
tab re-indented); that is an input too: the run must skip the file, and a fix must leave it alone.

Examples are generated with a fixed seed (``derandomize``), a few hundred per run. For thousands:

    SPEC_CONTRACT_FUZZ_EXAMPLES=5000 python -m pytest tests/reliability/test_generated_programs.py

(``SPEC_CONTRACT_FUZZ_SEED=<n>`` draws another sequence than the fixed one.) The engine runs in-process
through the command's own ``main`` for speed; a few examples go through a real subprocess, and the buffers
through one real server session.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import io
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import hypothesmith
import pytest
import pytest_lsp
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))  # the end-to-end tests' client helpers
from lsp_harness import initialize, make_client  # noqa: E402
from spec_contract import cli  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code is full of them

TOTAL = int(os.environ.get("SPEC_CONTRACT_FUZZ_EXAMPLES", "300"))
SEED = os.environ.get("SPEC_CONTRACT_FUZZ_SEED")
SHARES = {"models": 0.4, "workers": 0.3, "buffers": 0.3}  # of TOTAL, per way a program is used


def examples(share: str) -> int:
    return max(1, int(TOTAL * SHARES[share]))


def fuzz_settings(share: str):
    """Settings for a generated-programs test: its share of the examples, the fixed sequence by default."""
    configured = settings(max_examples=examples(share), derandomize=SEED is None, database=None, deadline=None,
                          suppress_health_check=list(HealthCheck), print_blob=True)
    return (lambda test: seed(int(SEED))(configured(test))) if SEED is not None else configured


programs = hypothesmith.from_grammar()

WORKER = """\
class EAGLEWorker:
    def __init__(self, target_worker, draft_model_runner):
        self.target_worker = target_worker
        self.draft_model_runner = draft_model_runner
        embed, head = self.target_worker.model_runner.model.get_embed_and_head()
        self.draft_model_runner.model.set_embed_and_head(embed, head)

    def step(self, batch):
{body}
        return self.target_worker.model_runner.model.forward_extend(batch)
"""

LLAMA = """\
class LlamaForCausalLM:
    def __init__(self, config):
        self.config = config

    def get_embed_and_head(self):
        return None, None

    def set_embed_and_head(self, embed, head):
        pass

    def forward_extend(self, batch, *args, scale: float = 1.0, **kwargs):
        return batch


EntryClass = LlamaForCausalLM
"""

WRAPPER = """\
{top}
from pkg.models.llama import LlamaForCausalLM


class LlavaForConditionalGeneration:
{class_body}
    def __init__(self, config):
        self.language_model = LlamaForCausalLM(config)
{init_body}
    def load_weights(self, weights):
{method_body}
{after}
EntryClass = LlavaForConditionalGeneration
"""


def indented(program: str, depth: int) -> str:
    """``program`` as a block ``depth`` levels in (a statement that does nothing when it is empty).

    Lines inside a multi-line string are indented too: that changes the string, not whether it parses.
    """
    text = textwrap.indent(program, "    " * depth, lambda line: True)
    return text if text.strip() else "    " * depth + "pass\n"


def with_newline(program: str) -> str:
    return program if program.endswith(("\n", "\r")) else program + "\n"


@st.composite
def wrapper_files(draw) -> str:
    """A wrapper that misses two forwards, with generated code above or after it and inside it.

    Two programs per file, each placed where the draw says: generating a program costs far more than
    checking it, so a file does not get one per place.
    """
    outside, inside = with_newline(draw(programs)), draw(programs)
    where = draw(st.sampled_from(["top", "after"]))
    body = draw(st.sampled_from(["class_body", "init_body", "method_body"]))
    parts = {"top": "", "after": "", "class_body": "", "init_body": "", "method_body": "        pass\n"}
    parts[where] = outside
    parts[body] = with_newline(indented(inside, 1 if body == "class_body" else 2))
    return WRAPPER.format(**parts)


@st.composite
def worker_files(draw) -> str:
    """The EAGLE worker with one generated program above it and as the body of one of its methods."""
    program = draw(programs)
    return with_newline(program) + WORKER.format(body=with_newline(indented(program, 2)))


def tree(root: Path, files: dict[str, str]) -> Path:
    base = {
        "pkg/__init__.py": "",
        "pkg/models/__init__.py": "",
        "pkg/speculative/__init__.py": "",
        "pkg/speculative/eagle_worker.py": WORKER.format(body="        pass\n"),
        "pkg/models/llama.py": LLAMA,
    }
    for rel, text in {**base, **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return root


def parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # generated code is full of SyntaxWarnings
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lines(text: str) -> list[str]:
    """Lines as Python and LSP count them: only CR LF, LF and CR end one (a form feed does not)."""
    return _LINE.findall(text)


def only_adds_lines(before: str, after: str) -> bool:
    operations = difflib.SequenceMatcher(None, lines(before), lines(after), autojunk=False).get_opcodes()
    return all(tag in ("equal", "insert") for tag, *_ in operations)


def check_in_process(root: Path, *args: str) -> tuple[int, str]:
    """``spec-contract check`` in this process: its exit code and output (a traceback fails the test)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = cli.main(["check", str(root), "--no-cache", *args])
    assert code in (0, 1, 2), (code, err.getvalue())
    return code, out.getvalue() + err.getvalue()


def fix_round(files: dict[str, str], edited: str) -> None:
    """Check, fix and check again a tree holding ``files``; ``edited`` is the file the fix may change."""
    with tempfile.TemporaryDirectory() as directory:
        root = tree(Path(directory), files)
        check_in_process(root, "--format", "json")
        code, output = check_in_process(root, "--fix")
        before = files[edited]
        after = (root / edited).read_bytes().decode("utf-8", "surrogatepass")
        if after != before:
            assert parses(before), f"--fix edited a file that does not parse:\n{output}"
            assert parses(after), f"--fix left a file that does not parse:\n{after}"
            assert only_adds_lines(before, after), f"--fix changed or removed lines:\n{after}"
            assert "Fixed" in output
        check_in_process(root)


@fuzz_settings("models")
@given(wrapper_files())
def test_generated_model_files(source):
    fix_round({"pkg/models/llava.py": source}, "pkg/models/llava.py")


PLAIN_WRAPPER = WRAPPER.format(top="", class_body="", init_body="", method_body="        pass\n", after="")


@fuzz_settings("workers")
@given(worker_files())
def test_generated_worker_files(worker):
    fix_round({"pkg/speculative/eagle_worker.py": worker, "pkg/models/llava.py": PLAIN_WRAPPER}, "pkg/models/llava.py")


def collect(strategy, count: int) -> list:
    """``count`` examples of ``strategy``, drawn the way the tests above draw them (fixed sequence)."""
    found: list = []

    @settings(max_examples=count, derandomize=SEED is None, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(example):
        found.append(example)

    (seed(int(SEED))(draw) if SEED is not None else draw)()
    return found


def test_generated_files_through_the_real_command(tmp_path):
    """A few examples through the installed command: the exit code CI sees, and no traceback on stderr."""
    for i, (wrapper, worker) in enumerate(collect(st.tuples(wrapper_files(), worker_files()), 5)):
        root = tree(tmp_path / str(i), {"pkg/models/llava.py": wrapper, "pkg/speculative/eagle_worker.py": worker})
        for args in (["--format", "sarif"], ["--fix"], []):
            result = subprocess.run([sys.executable, "-m", "spec_contract", "check", str(root), "--no-cache", *args],
                                    capture_output=True, text=True, timeout=120)
            assert result.returncode in (0, 1, 2) and "Traceback" not in result.stderr, result.stderr
        after = (root / "pkg/models/llava.py").read_bytes().decode("utf-8", "surrogatepass")
        assert after == wrapper or (parses(after) and only_adds_lines(wrapper, after))


# buffers ------------------------------------------------------------------------------------------------
SERVER_COMMAND = [sys.executable, "-m", "spec_contract", "serve"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client))
async def neovim(lsp_client: LanguageClient):
    lsp_client.editor = "neovim-0.11"
    lsp_client.init_result = None
    yield lsp_client
    if lsp_client.init_result is not None:
        await lsp_client.shutdown_session()


def lsp_apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply edits whose positions count UTF-8 bytes (Neovim's encoding) on LSP lines, last first."""
    def offset(position: types.Position) -> int:
        split = lines(text)
        if position.line >= len(split):
            return len(text)
        start = sum(len(line) for line in split[: position.line])
        return start + len(split[position.line].encode("utf-8", "surrogatepass")[: position.character]
                           .decode("utf-8", "surrogatepass"))

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def class_position(text: str) -> types.Position:
    """Where the wrapper's name is (UTF-8 columns), for hovers and code actions."""
    for number, line in enumerate(lines(text)):
        if line.startswith("class LlavaForConditionalGeneration"):
            return types.Position(number, 6)
    return types.Position(0, 0)


async def test_generated_buffers_in_one_server_session(neovim, tmp_path):
    """Two open buffers, the wrapper and the worker, changed in turn to generated ones (two wrappers for each
    worker); after each change the wrapper's diagnostics, a hover and its fix-all action are asked for, and
    the fix-all edit, applied, must give a buffer that parses and only gains lines."""
    root = tree(tmp_path / "ws", {"pkg/models/llava.py": PLAIN_WRAPPER})
    # Drawn before the session starts: drawing blocks this event loop, and with it the client's answers to
    # the server's own requests (which the server gives up on after a while).
    count = examples("buffers")
    wrappers = collect(wrapper_files(), count - count // 3)
    workers = collect(worker_files(), count // 3)
    await initialize(neovim, [root])
    uris = {}
    for rel in ("pkg/models/llava.py", "pkg/speculative/eagle_worker.py"):
        uris[rel] = (root / rel).as_uri()
        neovim.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uris[rel], language_id="python", version=1, text=(root / rel).read_text())))
    uri = uris["pkg/models/llava.py"]
    document = types.TextDocumentIdentifier(uri=uri)
    changes = [("pkg/models/llava.py", text) for text in wrappers]
    for i, worker in enumerate(workers):
        changes.insert(3 * i + 2, ("pkg/speculative/eagle_worker.py", worker))
    text, fixed = PLAIN_WRAPPER, 0
    for version, (rel, new_text) in enumerate(changes, start=2):
        neovim.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uris[rel], version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)]))
        if rel == "pkg/models/llava.py":
            text = new_text
        at = class_position(text)
        # Neovim takes pushed diagnostics: the server publishes what a change made before it answers a
        # request on the document, so after the hover they are those of this text.
        await neovim.text_document_hover_async(types.HoverParams(text_document=document, position=at))
        diagnostics = list(neovim.diagnostics.get(uri, []))
        actions = await neovim.text_document_code_action_async(types.CodeActionParams(
            text_document=document, range=types.Range(at, at),
            context=types.CodeActionContext(diagnostics=diagnostics, only=["source.fixAll"])))
        for action in actions or []:
            if action.edit is None:
                action = await neovim.code_action_resolve_async(action)
            if action.edit is None:
                continue
            edits = [e for change in action.edit.document_changes or [] if change.text_document.uri == uri
                     for e in change.edits] + list((action.edit.changes or {}).get(uri, []))
            if edits:
                after = lsp_apply(text, edits)
                assert parses(text), f"a fix was offered for a buffer that does not parse:\n{text}"
                assert parses(after), f"the fix-all edit leaves a buffer that does not parse:\n{after}"
                assert only_adds_lines(text, after), f"the fix-all edit changes lines:\n{after}"
                fixed += 1
    tracebacks = [m.message for m in neovim.log_messages if "Traceback" in m.message]
    assert not tracebacks, tracebacks[0]
    assert fixed > 0  # the buffers did exercise the fix
