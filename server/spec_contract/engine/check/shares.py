"""Guarded reads whose value the loader shares with the draft: a target without the member leaves a draft that
has none of its own without it, so the guard does not save the run.

vLLM 0.25.1's V2 speculators load the draft, then take ``target_lm_head = getattr(target_model, "lm_head",
None)`` from the model as handed (not from ``get_language_model()``, which the same function asks for the
embeddings) and, only when it found one, set ``eagle_model.lm_head = target_lm_head``. A multimodal wrapper
keeps its head in its language model, so the read finds nothing and the draft keeps what it has; a draft whose
class never builds a head (``EagleLlamaForCausalLM`` and ``EagleMistralForCausalLM`` call
``nn.Module.__init__(self)`` instead of ``LlamaForCausalLM.__init__``, which assigns ``lm_head``) then dies in
the ``compute_logits`` it inherits, ``self.logits_processor(self.lm_head, …)``, in the start-up dummy run
(upstream issue 48700, Mistral3 with a Mistral EAGLE draft).

Which drafts lack the member is read from their classes, never assumed: a registered draft head whose member
is an attribute a base assigns in an ``__init__`` that does not run for it. A draft named for an algorithm
(``DFlashDraftModel``, by the release's names) is loaded only by that algorithm's runs: a site meets it when
it serves that algorithm; a draft named for none meets any site.
"""

from __future__ import annotations

from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.registry import ModelRegistry
from spec_contract.engine.results import CallSite, Role
from spec_contract.engine.runner_choice import RunnerDefault


class Drafts:
    """The registered draft heads, and which of them lack a member unless the loader shares the target's."""

    def __init__(self, index: Index, config: Config, registry: ModelRegistry, algorithms: tuple[str, ...],
                 default: RunnerDefault | None = None) -> None:
        self._index = index
        self._config = config
        self._drafts = tuple(dict.fromkeys(ClassKey(module, name) for module, name in registry.registered
                                           if config.draft_shaped(name)))
        self._algorithms = algorithms  # the release's
        self._headless: dict[str, tuple[ClassKey, ...]] = {}
        self._default = default
        self._architectures: dict[tuple[str, str], set[str]] = {}  # a class → the architectures it is registered as
        for architecture, where in registry.architectures.items():
            self._architectures.setdefault(where, set()).add(architecture)

    def v1_by_default(self, key: ClassKey) -> tuple[str | None, str]:
        """(why the class's runs may take the V1 model runner unless the user picks one, None when V2 is
        certainly their default; why V2 is), as the engine's function says (see ``resolve.runner_default``)."""
        if self._default is None:
            return "which model runner its runs default to cannot be told here", ""
        architectures = frozenset(self._architectures.get((key.module, key.qualname), {key.qualname}))
        v2, why = self._default.runs_v2(architectures, lambda word: _fact(self._index, key, self._config, word))
        return (None, why) if v2 else (why, "")

    def needing(self, site: CallSite, role: Role) -> tuple[str, ...]:
        """The drafts a shared target read must find the member for (their names; empty: the guard holds)."""
        if not site.shared or role is not Role.TARGET:
            return ()
        return tuple(key.qualname for key in self._without(site.member) if self._meets(site, key))

    def meeting_runs(self, site: CallSite, role: Role) -> frozenset[str]:
        """The algorithms whose runs may load a draft the shared read leaves without the member: a draft named
        for algorithms, theirs that the site serves; one named for none, every run the site serves."""
        runs: set[str] = set()
        for name in self.needing(site, role):
            runs.update(a for a in (self._named_for(name) or self._algorithms) if site.serves(a))
        return frozenset(runs)

    def _meets(self, site: CallSite, key: ClassKey) -> bool:
        named = self._named_for(key.qualname)
        return not named or any(site.serves(a) for a in named)

    def _named_for(self, name: str) -> list[str]:
        """The release's algorithms a draft's name holds (``DFlash2DraftModel``: DFLASH), any capitalisation."""
        return [a for a in self._algorithms if a.casefold() in name.casefold()]

    def _without(self, member: str) -> tuple[ClassKey, ...]:
        found = self._headless.get(member)
        if found is None:
            found = self._headless[member] = tuple(key for key in self._drafts if self._skipped(key, member))
        return found

    def _skipped(self, key: ClassKey, member: str) -> bool:
        """Whether ``key``'s ``member`` is only an attribute a base assigns in an ``__init__`` that never runs
        for ``key`` (the class reads it in what it inherits, but never builds it)."""
        index = self._index
        if index.class_summary(key) is None:
            return False
        found = index.provision(key, member)
        if found is None or found.member is None or found.member.kind != "instance_attribute":
            return False
        owner = index.class_summary(found.owner)
        if owner is None:
            return False
        line = found.member.span.line
        methods = [m for m in owner.members if m.kind in ("method", "async_method") and m.span.line <= line]
        if not methods or max(methods, key=lambda m: m.span.line).name != "__init__":
            return False  # assigned outside __init__: it may be built later
        return not index.runs(key, found.owner, "__init__")


# what vLLM's loader asks of a model whose checkpoint holds experts: the weight names of its fused expert layers
_EXPERT_MAPPING = "get_expert_mapping"


def _fact(index: Index, key: ClassKey, config: Config, word: str) -> tuple[bool | None, str]:
    """What a word of the model config the default's function tests is for the class, and that in words: ``is_moe``
    (its checkpoints have experts), ``is_<x>`` as vLLM's registry reads it off the class (``is_hybrid`` is
    whether it declares ``IsHybrid``); any other word cannot be told here."""
    if word == "is_moe":
        experts = _has_experts(index, key, config)
        return experts, f"its checkpoints {'have' if experts else 'have no'} experts"
    if word.startswith("is_") and len(word) > 3:
        interface = "Is" + "".join(part.capitalize() for part in word[3:].split("_"))
        declared = any(k.qualname.rsplit(".", 1)[-1] == interface for k in index.mro(key))
        return declared, f"it {'declares' if declared else 'does not declare'} `{interface}`"
    return None, ""


def _has_experts(index: Index, key: ClassKey, config: Config) -> bool:
    """Whether every checkpoint of the class has experts, as far as its classes say: the class, or each class
    its language model may be, declares vLLM's ``MixtureOfExperts``, is named for its experts (``…Moe…``), or
    maps expert weights for the loader (``get_expert_mapping``, which only a model with fused expert layers
    defines; MiniMax M3's language model has it and neither of the others). A language model that may be
    dense keeps the V2 default."""
    def moe(owner: ClassKey) -> bool:
        if any(k.qualname.rsplit(".", 1)[-1] == "MixtureOfExperts" or "moe" in k.qualname.casefold()
               for k in index.mro(owner)):
            return True
        found = index.provision(owner, _EXPERT_MAPPING)
        return found is not None and found.member is not None and found.member.kind in ("method", "async_method")
    if moe(key):
        return True
    inners = [inner for attr in index.language_attrs(key) or config.delegate_names
              for inner in index.delegates(key).get(attr, ())]
    return bool(inners) and all(moe(inner) for inner in inners)
