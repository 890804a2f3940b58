"""Small workspaces for the engine tests, written from inline text so each test shows the shape it checks.

``make_tree`` writes files (dedented; ``bytes`` verbatim) under a root; ``analyze`` runs the engine the way
the CLI does, without the persistent cache; ``findings`` and ``contract`` turn results into plain tuples with
root-relative paths and 1-based lines, so a test can compare the whole result, not a count.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from spec_contract.engine.config import load_config
from spec_contract.engine.project import Project
from spec_contract.engine.queries import Analysis

# A worker that uses one member on each role's model object, as SGLang's EAGLE worker does.
EAGLE_WORKER = """
    class EAGLEWorker:
        def __init__(self, target_worker, draft_model_runner):
            self.target_worker = target_worker
            self.draft_model_runner = draft_model_runner
            embed, head = self.target_worker.model_runner.model.get_embed_and_head()
            self.draft_model_runner.model.set_embed_and_head(embed, head)
"""

# The inner language model: provides both members the worker uses.
CLEAN_WRAPPER = {"pkg/models/llava.py": """
    from pkg.models.llama import LlamaForCausalLM

    class LlavaForConditionalGeneration:
        def __init__(self, config):
            self.language_model = LlamaForCausalLM(config)

        def get_embed_and_head(self):
            return self.language_model.get_embed_and_head()

        def set_embed_and_head(self, embed, head):
            self.language_model.set_embed_and_head(embed, head)

    EntryClass = LlavaForConditionalGeneration
"""}  # a wrapper that forwards everything the base tree's worker uses

LLAMA = """
    class LlamaForCausalLM:
        def __init__(self, config):
            self.config = config

        def get_embed_and_head(self):
            return None, None

        def set_embed_and_head(self, embed, head):
            pass

    EntryClass = LlamaForCausalLM
"""


WORKER = "pkg/speculative/eagle_worker.py"

# The release's algorithms, as SGLang names them (an Enum beside its predicates), the flags the model runner
# tests, set under those predicates, and the worker each algorithm's runs build: what tells which runs reach
# a worker line (see ``resolve.algorithms``)
SPEC_INFO_PATH = "pkg/speculative/spec_info.py"
SPEC_INFO = """
    from enum import Enum, auto


    class SpeculativeAlgorithm(Enum):
        EAGLE = auto()
        EAGLE3 = auto()
        DFLASH = auto()
        DSPARK = auto()
        FROZEN_KV_MTP = auto()
        NONE = auto()

        def is_eagle(self):
            return self in (SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3)

        def is_eagle3(self):
            return self == SpeculativeAlgorithm.EAGLE3

        def is_dflash(self):
            return self == SpeculativeAlgorithm.DFLASH

        def is_dspark(self):
            return self == SpeculativeAlgorithm.DSPARK

        def is_frozen_kv_mtp(self):
            return self == SpeculativeAlgorithm.FROZEN_KV_MTP

        def create_worker(self):
            if self.is_dflash():
                from pkg.speculative.dflash_worker import DFlashWorker
                return DFlashWorker
            if self.is_dspark():
                from pkg.speculative.dspark_worker import DSparkWorker
                return DSparkWorker
            if self.is_frozen_kv_mtp():
                from pkg.speculative.frozen_kv_mtp_worker import FrozenKVMTPWorker
                return FrozenKVMTPWorker
            from pkg.speculative.eagle_worker import EAGLEWorker
            return EAGLEWorker


    def resolve_aux_hidden_state(runner, spec_algorithm):
        runner.eagle_use_aux_hidden_state = spec_algorithm.is_eagle3()
        runner.dflash_use_aux_hidden_state = spec_algorithm.is_dflash() or spec_algorithm.is_dspark()
        runner.is_dspark = spec_algorithm.is_dspark()
"""


def base_tree(root: Path, files: dict[str, str | bytes] | None = None) -> Path:
    """A package shaped like SGLang's: the EAGLE worker, the Llama model, and ``files`` on top."""
    return make_tree(root, {
        "pkg/__init__.py": "",
        "pkg/models/__init__.py": "",
        "pkg/speculative/__init__.py": "",
        WORKER: EAGLE_WORKER,
        SPEC_INFO_PATH: SPEC_INFO,
        "pkg/models/llama.py": LLAMA,
        **(files or {}),
    })


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``files`` (relative path → text) under ``root``; text is dedented, bytes are written as is."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return root


def analyze(root: Path, *, problems: dict[str, str] | None = None) -> Analysis:
    """Analyse ``root``; unless a test expects some, no file may have gone unread (a typo in a fixture
    would otherwise make a "no findings" test pass for the wrong reason)."""
    analysis = Project(root, load_config(root), use_cache=False).analyze()
    assert {rel(root, p): why.split(":")[0] for p, why in analysis.problems.items()} == (problems or {})
    return analysis


def rel(root: Path, path: str) -> str:
    return Path(path).resolve().relative_to(root.resolve()).as_posix()


def sites(root: Path, call_sites) -> tuple[tuple[str, int, bool], ...]:
    """Call sites as (relative path, 1-based line, guarded)."""
    return tuple((rel(root, s.path), s.span.line + 1, s.guarded) for s in call_sites)


# what the status model reports of members no inner model has (check.crashes): its own tests look at them
STATUS_CODES = frozenset({"SC010", "SC011", "SC012"})


def forward_findings(analysis: Analysis) -> list:
    """The findings of the forward and capability checks (SC001-SC009), those the shape tests are about."""
    return [f for f in analysis.findings if f.code not in STATUS_CODES]


def findings(analysis: Analysis) -> list[tuple]:
    """(code, class, member, roles, delegate, inner class, severity, call sites) for every finding of the forward
    and capability checks."""
    root = analysis.root
    return [(f.code, f.class_name, f.member, f.roles, f.delegate, f.inner_class, f.severity, sites(root, f.call_sites))
            for f in forward_findings(analysis)]


def contract(analysis: Analysis) -> list[tuple]:
    """(role, member, required, is_call, call sites) for every contract entry."""
    root = analysis.root
    return [(e.role, e.member, e.required, e.is_call, sites(root, e.call_sites)) for e in analysis.contract.entries]


def line_of(root: Path, rel_path: str, needle: str) -> int:
    """1-based line of the only line in a written file that contains ``needle``."""
    lines = (root / rel_path).read_text(encoding="utf-8").splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if needle in line]
    assert len(hits) == 1, f"{needle!r} occurs on lines {hits} of {rel_path}"
    return hits[0]
