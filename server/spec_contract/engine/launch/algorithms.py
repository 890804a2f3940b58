"""Which part of the contract a launch's algorithm selects, from the name the engine's option takes.

The profile's ``[[algorithms]]`` (EAGLE3, DFLASH, DSPARK) mark the worker uses that only their runs make.
Uses marked with no algorithm sit in the EAGLE-family workers (``eagle_worker.py``, the multi-layer and
frozen-KV MTP workers): every run of an algorithm without worker files of its own (EAGLE, EAGLE3, NEXTN,
STANDALONE, vLLM's eagle and mtp) makes them, while DFLASH and DSPARK runs go through their own workers.
A launch name the engine knows but the profile has no algorithm for (``EAGLE``, ``NEXTN``) selects those
family uses alone; ``NGRAM`` has no draft model and selects nothing.

Some of the family's worker files are one launch name's own: the engine picks the worker class by the name
(SGLang's ``SpeculativeAlgorithm.create_worker`` builds ``FrozenKVMTPWorkerV2`` only for ``FROZEN_KV_MTP``;
vLLM's model runner builds ``Gemma4Proposer`` only for ``gemma4_mtp``), so a run of any other name never
reaches their lines. What a launch is told (the uses it lists, its notes) names only the files its run makes;
what ``check`` and the status model decide of a class is not narrowed by them.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec_contract.engine.check.status import BASE_ALGORITHM
from spec_contract.engine.config import Config
from spec_contract.engine.launch.command import LaunchError
from spec_contract.engine.read.files import glob_match

# the engine's spellings beyond the profile's names: name → profile algorithm ("" = the family uses only,
# None = no model contract at all)
_ALIASES: dict[str, dict[str, str | None]] = {
    "sglang": {"EAGLE": "", "NEXTN": "", "STANDALONE": "", "FROZEN_KV_MTP": "", "MTP": "", "NGRAM": None},
    "vllm": {"EAGLE": "", "MTP": "", "DEEPSEEK_MTP": "", "GEMMA4_MTP": "", "MEDUSA": "", "DRAFT_MODEL": "",
             "NGRAM": None, "SUFFIX": None},
}

# worker files (globs relative to the engine's root) only a run of one launch name makes (see the module
# docstring); a name listed twice shares them
_OWN_WORKERS: dict[str, dict[str, tuple[str, ...]]] = {
    "sglang": {
        "FROZEN_KV_MTP": ("**/speculative/frozen_kv_mtp*",),
        "STANDALONE": ("**/speculative/standalone_worker*",),
    },
    "vllm": {
        "MTP": ("**/worker/gpu/spec_decode/mtp/**", "**/worker/gpu/spec_decode/multi_module_mtp/**"),
        "DEEPSEEK_MTP": ("**/worker/gpu/spec_decode/mtp/**", "**/worker/gpu/spec_decode/multi_module_mtp/**"),
        "GEMMA4_MTP": ("**/v1/spec_decode/gemma4.py", "**/worker/gpu/spec_decode/gemma4/**"),
        "MEDUSA": ("**/v1/spec_decode/medusa.py",),
        "DRAFT_MODEL": ("**/v1/spec_decode/draft_model.py", "**/worker/gpu/spec_decode/draft_model/**"),
    },
}


@dataclass(frozen=True)
class Selection:
    """The uses a run of one algorithm makes: those of ``algorithms``, and the family's unmarked ones when
    ``family`` (a run with no model contract selects none); and the algorithms whose capability gates it
    passes first (``gates``: the profile's ``gated_by``), whose refusals stop it too but whose other uses it
    never makes."""

    name: str  # as the launch spelled it, upper-cased
    algorithms: frozenset[str]
    family: bool
    gates: frozenset[str] = frozenset()
    others: tuple[str, ...] = ()  # globs of the worker files other launch names' runs make, and this one never

    def reaches(self, path: str) -> bool:
        """Whether a run of this name can reach a line of the worker file ``path`` (relative to the engine's
        root): not one another launch name's run alone makes."""
        return not glob_match(path, self.others)

    def selects(self, algorithm: str | None) -> bool:
        """Whether the run makes a use of ``algorithm`` (None, or the status model's ``BASE_ALGORITHM``: the
        family's shared uses)."""
        return self.family if algorithm is None or algorithm == BASE_ALGORITHM else algorithm in self.algorithms


def valid_names(config: Config, engine: str) -> list[str]:
    """The names the launch option takes, as the engine spells them (vLLM's ``method`` is lower case)."""
    names = sorted({a.name for a in config.algorithms} | set(_ALIASES.get(engine, {})))
    return [n.lower() for n in names] if engine == "vllm" else names


def select(config: Config, engine: str, name: str) -> Selection:
    """The selection for ``name`` (any case); an unknown name is an error listing the valid ones."""
    wanted = name.strip().upper()
    specs = {a.name: a for a in config.algorithms}
    aliases = _ALIASES.get(engine, {})
    own = _OWN_WORKERS.get(engine, {})
    others = tuple(dict.fromkeys(g for n, globs in own.items() for g in globs if g not in own.get(wanted, ())))
    if wanted in specs:
        spec = specs[wanted]
        return Selection(wanted, frozenset((wanted,)), not spec.files, frozenset(spec.gated_by), others)
    if wanted in aliases:
        target = aliases[wanted]
        if target is None:
            return Selection(wanted, frozenset(), False)
        return Selection(wanted, frozenset((target,)) if target else frozenset(), True, others=others)
    raise LaunchError(f"unknown speculative algorithm {name!r}; valid: {', '.join(valid_names(config, engine))}")
