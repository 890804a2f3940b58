"""The rule registry: every finding kind the engine reports, in one place.

A code is never renumbered or reused; new kinds are appended. The CLI's reports, ``--select``, the
settings' ``severity`` table, the language server (diagnostic codes, their documentation links, hover) and
the README's table all read this registry, so a kind is added here and nowhere else.

What each severity promises: an **error** means a run with the class reaches a worker line that raises
``AttributeError``; a **warning** is a capability the class loses (the engine refuses it cleanly at start-up)
or a crash that needs an unusual configuration; **information** is a degraded path or a rare condition; a
**hint** is what a class could gain by implementing members like a class holding the same parts (a capability
refused cleanly, SC012, or a guarded call the worker skips, SC014).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(str, enum.Enum):
    """How bad a finding is (see the module docstring), written as in settings and reports.

    A ``str`` so reports, JSON and comparisons with the plain words keep working; ``str()`` is the word.
    """

    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"

    def __str__(self) -> str:
        return self.value


class Fix(str, enum.Enum):
    """What a rule's fix does: forward the members (``check --fix``, the delegation quick fixes), declare the
    capability on the class (its Protocol base and import), implement the members by analogy (and forward them
    when the inner model gets them), or nothing the engine can write."""

    FORWARD = "forward"
    DECLARE = "declare"
    IMPLEMENT = "implement"  # write the members, each like the class it is modelled on (and forward it)
    NONE = "none"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity  # the default; users override it per code with ``severity = {CODE = "..."}``
    summary: str  # one line, for the README table and SARIF
    doc: str  # what the finding means at run time and what to do, for the README
    fix: Fix = Fix.FORWARD

    @property
    def forwards(self) -> bool:
        """The fix adds members to the class (``check --fix``, the delegation quick fixes): forwards, or
        implementations modelled on another class."""
        return self.fix in (Fix.FORWARD, Fix.IMPLEMENT)

    @property
    def anchor(self) -> str:
        """The README heading that documents the rule (``README.md#sc003-missing-capability``)."""
        return f"{self.code.lower()}-{self.name}"


# One constant per rule, for the code that reports it; RULES lists them in code order.
MISSING_FORWARD = Rule(
    "SC001", "missing-forward", Severity.ERROR,
    "a run with this class reaches a worker line that uses a member the wrapper does not forward",
    "A worker uses the member on the model object with no guard, and the class can play that role (a target: "
    "a generative model; a draft: a draft head). The run loads the models, reaches that line and dies with "
    "`AttributeError`; or the line is the engine's own check for the member (`if not hasattr(m, \"x\"): "
    "raise`, a `hasattr` chain ending in `raise`), which tests the loaded model and so refuses the run only "
    "after the weights have loaded: the same cost, said so in the message, with the members the run needs "
    "past that check. The message says when: at start-up (after the weights load) or at the first request, "
    "and `--format json` gives each call site's `phase` and the algorithms whose runs reach it. Forward the "
    "member (the quick fix and `check --fix` add the delegation).")
MISSING_OPTIONAL_FORWARD = Rule(
    "SC002", "missing-optional-forward", Severity.INFORMATION,
    "a guarded (optional) contract member is not forwarded: the run takes a degraded path",
    "Every use is guarded (`hasattr`, `getattr(…, None)`, `except AttributeError`): the run does not "
    "crash, it takes the slower or reduced path the worker falls back to.")
MISSING_CAPABILITY = Rule(
    "SC003", "missing-capability", Severity.WARNING,
    "the class fails a capability gate its inner model passes before the weights load: the engine refuses "
    "the algorithm cleanly (lists every member the algorithm needs past the gate)",
    "Kept for a gate a run meets before anything loads. Every gate the workers make on a model object tests "
    "the loaded model, so it refuses only after the weights have loaded, which costs what a crash costs: "
    "such a gate is reported as the crash it is (SC001 when an inner model has the member, SC010 or SC011 "
    "otherwise), naming the check.")
MISSING_CONDITIONAL_FORWARD = Rule(
    "SC004", "missing-conditional-forward", Severity.INFORMATION,
    "a member used only under a rare condition (an environment flag that defaults off, a model-type "
    "or config test) is not forwarded",
    "Every unguarded use sits under a condition a run rarely meets: an environment flag that defaults "
    "off (directly, or through a method that is False unless the flag is set), a `model_type` or config "
    "class test, or the handler of an `AttributeError` from another member. The message names the "
    "condition; the run crashes only when it holds.")
MISSING_DRAFT_FORWARD = Rule(
    "SC005", "missing-draft-forward", Severity.WARNING,
    "a draft-model member is not forwarded by a class that is not shaped like a draft: it crashes only "
    "if a draft checkpoint names this class",
    "The draft role's contract is checked on every registered class, since a draft checkpoint may name "
    "any of them, but only draft heads (and classes a config rewrite loads as every draft, the profile's "
    "`draft-classes`) are drafts by shape: on any other class a missing draft member is a warning. Draft "
    "heads are read from the engine's code where it names them: the architectures its draft-config rewrite "
    "writes for a draft checkpoint (SGLang's `ModelConfig._config_draft_model`, see `draft-rewrites`), the "
    "classes its registry registers only as draft models (vLLM's `_SPECULATIVE_DECODING_MODELS`, see "
    "`draft-tables`), and a registered class made from a registered draft head (`class "
    "MuseGlimmerAssistantModel(DFlashDraftModel)`); the profile's `draft-only-classes` globs stand in for "
    "the heads a checkpoint names itself (EAGLE), matching `DSpark`, `Dspark` or `DSPARK` alike where a word "
    "of the name begins.")
CAPABILITY_NOT_DECLARED = Rule(
    "SC006", "capability-not-declared", Severity.WARNING,
    "the class's language model declares and backs a Protocol capability (EAGLE-3) the class does not "
    "declare: the engine refuses the algorithm at start-up",
    "The engine gates the algorithm with an `isinstance` check on a runtime-checkable Protocol (vLLM's "
    "`supports_eagle3(model)` on `SupportsEagle3`). The inner language model passes it, the wrapper does "
    "not, so the run stops at start-up with a clear refusal. Forwarding the Protocol's methods does not "
    "help (the check is on the class): add the Protocol to the class's bases, with its import.",
    fix=Fix.DECLARE)
CAPABILITY_NOT_BACKED = Rule(
    "SC007", "capability-not-backed", Severity.ERROR,
    "the class declares a Protocol capability that fails for it: a run of the algorithm passes the "
    "engine's check and then crashes at start-up",
    "The class declares the Protocol (through its MRO or by setting its marker), and a run of the algorithm "
    "then fails at start-up in one of three ways. The default methods, which delegate by themselves (vLLM's "
    "`SupportsEagle3`: `get_language_model()`, else `.language_model`, else `self`; then its `.model`), reach "
    "a known class that is not the engine's mixin (`EagleModelMixin`), so their assertion fails. Or a "
    "`forward` on the way to that holder, the holder's own included, returns only the hidden states where "
    "the model runner unpacks `(hidden_states, aux_hidden_states)`. Or the language model the proposers take "
    "(`get_language_model()`, else the class) has no `.model` for them to read when they load the draft. "
    "Make the holder inherit the mixin or override the defaults, hand the aux outputs on, or give the "
    "proposers the decoder they read.",
    fix=Fix.NONE)
CAPABILITY_UNVERIFIABLE = Rule(
    "SC008", "capability-unverifiable", Severity.INFORMATION,
    "the class declares a Protocol capability, but the language model its defaults reach is chosen from "
    "the HF config at run time",
    "The wrapper builds its language model from an architecture the checkpoint's config names "
    "(`init_vllm_registered_model` without a literal `architectures=[…]`), so whether the Protocol's "
    "default methods work cannot be told without the checkpoint. Nothing is guessed.",
    fix=Fix.NONE)

CAPABILITY_NOT_DECLARABLE = Rule(
    "SC009", "capability-not-declarable", Severity.WARNING,
    "the class's language model declares and backs a Protocol capability the class does not declare, and "
    "declaring it would not be enough: the engine refuses the algorithm at start-up",
    "As for SC006, the run stops at start-up with a clear refusal, since the class does not declare the "
    "Protocol its language model backs. But adding the Protocol to the bases would only move the failure: "
    "the message says what would fail once the class declares it (the defaults' holder is not the mixin, "
    "or a `forward` on the way drops the aux hidden states, or the proposers find no `.model`). So no "
    "declaration is offered: first make that part work (override the defaults to call the language model's "
    "own methods, hand the aux outputs on), then declare.",
    fix=Fix.NONE)
MISSING_IMPLEMENTATION = Rule(
    "SC010", "missing-implementation", Severity.ERROR,
    "a run with this class reaches a worker line that uses a member neither the class nor any inner model has, "
    "and the class shows it means to support the algorithm: implement it (like the class named)",
    "No inner model has the member, so there is nothing to forward: the class must implement it. The class "
    "shows it means to support the algorithm (it has a member the engine uses on the same runs as the missing "
    "one, or on fewer: EAGLE-3's capture method says it means EAGLE, EAGLE's members say nothing of EAGLE-3; "
    "a member the engine calls on every run's model says nothing), and the run dies at the line named, with "
    "`AttributeError` or at the engine's own check, at start-up (after the weights load) or at the first "
    "request. The message names a model: a class "
    "holding the same parts (its decoder in `self.model`, its own `lm_head`) whose body uses only attributes "
    "this class has too (a written one, such as the decoder's `layers_to_capture`, must be one its owner "
    "already sets, so its `forward` reads it); the quick fix and `check --fix` insert that body. When the "
    "language model lacks the member too and can implement it so, the fix implements it there and forwards it "
    "here, in one edit. When no model fits, the message says which attribute is missing.",
    fix=Fix.IMPLEMENT)
UNREFUSED_CRASH = Rule(
    "SC011", "unrefused-crash", Severity.WARNING,
    "classes that show no support for an algorithm crash at this worker line instead of being refused: one "
    "finding on the line, listing each class and the members it lacks",
    "The classes lack a member the line uses and none of them shows it means to support the algorithm: a "
    "run with one loads the weights and then dies with `AttributeError` there, or the line is the engine's "
    "own check, which refuses the run only after the weights have loaded (the message says so); for a "
    "capability the engine checks with a Protocol (vLLM's `supports_eagle3(model)`), the classes do not "
    "declare it and hold no language model that does. For the "
    "engine this is a missing early gate as much as a missing member, so it is said once, on the worker "
    "line, not once per class. Only classes a run can serve as the target are "
    "listed: not those the engine's own generation test refuses (read, never run, see `generation-test`: the "
    "architectures SGLang's `is_generation_model` tests in a `return False` branch; the registered classes "
    "lacking a member of the Protocol vLLM's `is_text_generation_model` tests with `isinstance`, "
    "`compute_logits`), nor draft heads, nor those `non-target-classes` names where the generation test does "
    "not accept them (when it does, a note says which glob it contradicts). A registered class whose "
    "`__init__` always raises (a platform's stand-in) is never built, so it is neither checked nor listed. "
    "`--format json` lists each class (`classes`: path, "
    "class, members, and how each member can be implemented); hover and the reports give each class's status. "
    "`check --fix --select SC011` implements the members of the listed classes where a model fits (see SC010).",
    fix=Fix.IMPLEMENT)
IMPLEMENTABLE = Rule(
    "SC012", "implementable", Severity.HINT,
    "the engine refuses the algorithm for this class (only after loading the weights), but the class could "
    "support it: every member it lacks can be implemented like a class holding the same parts",
    "The engine's capability check refuses the algorithm, the class shows no sign of meaning to support it, "
    "and neither the class nor its inner model has the check's member; but each member the algorithm needs "
    "can be modelled on a class that has the same parts "
    "(see SC010). The source action \"Enable EAGLE3 for …\" (`source.enableEagle3.spec-contract`, in the "
    "editor's source-action menu on the class; `check --fix --select SC012` on the command line) adds them all. "
    "Text output shows hints only with `--hints`; `--format json` always includes them.",
    fix=Fix.IMPLEMENT)
BROKEN_FORWARD = Rule(
    "SC013", "broken-forward", Severity.ERROR,
    "the class hands a contract member to an inner model whose class does not have it: a run with this class "
    "reaches the worker line, calls the class's forward and dies inside it",
    "The class (or a base) has the member, so every `hasattr` test passes, but its body only hands it on "
    "(`self.model.set_dflash_layers_to_capture(...)`), untested, to an inner model of a class that defines no "
    "such member (a subclass may build another inner than the base the forward was written for). The run "
    "reaches the worker line and dies with `AttributeError` in the forward. Give the inner class the member "
    "(implement it there, as the classes that have it do), or let the outer class implement it itself; "
    "forwarding again would not help, so there is no quick fix.",
    fix=Fix.NONE)

MISSING_OPTIONAL_IMPLEMENTATION = Rule(
    "SC014", "missing-optional-implementation", Severity.HINT,
    "a guarded (optional) contract member that no inner model has is not implemented, though a class holding the "
    "same parts implements it: the run takes a degraded path",
    "The worker calls the member only when the model has it (`hasattr`, `getattr(…, None)`, `except "
    "AttributeError`), so a run with the class does not crash: it skips the call and goes without what the "
    "member does (a draft that lacks `set_lm_head_from_target` keeps its own `lm_head` instead of sharing the "
    "target's). No inner model has the member, so there is nothing to forward (that is SC002's case), but a "
    "class holding the same parts implements it, and its body fits this class (see SC010): the message names "
    "the guarded call site, what the run loses, and the model; the quick fix and `check --fix --select SC014` "
    "insert that body. A hint, not information: that a sibling implements it is a suggestion, not a sign this "
    "class meant to; text output shows hints only with `--hints`, `--format json` always includes them.",
    fix=Fix.IMPLEMENT)

MISSING_CONDITIONAL_IMPLEMENTATION = Rule(
    "SC015", "missing-conditional-implementation", Severity.INFORMATION,
    "a class that means to run the algorithm lacks a method a worker calls only past a test the tool cannot "
    "decide (an option, a state only some runs set), and no inner model has it",
    "As SC010, when the worker line runs only past a test whose value the tool does not follow: an attribute "
    "set from an option or from the checkpoint (`if self.use_confidence_head:`, set to "
    "`enable_adaptive_verification and …`), a config value. A run with the class crashes there only when the "
    "test holds; the message names the tested words and `condition` holds them. The class must show it means "
    "to support the algorithm, as for SC010; a draft head, that it is that algorithm's draft: a member only "
    "runs of the line's algorithms use, and not every run with a draft (a DSpark head's Markov members say "
    "DSPARK; `compute_logits` says nothing), so an MTP head never meets a DSPARK speculator's uses. A state set "
    "from a helper's value stands behind the test the helper makes of the model it is handed before returning "
    "anything true (`if not isinstance(target_model, P): return False`): a class that fails it never reaches "
    "the uses under the state. The fix implements the method like a class holding the same parts, where one "
    "fits (see SC010).",
    fix=Fix.IMPLEMENT)

RULES: tuple[Rule, ...] = (
    MISSING_FORWARD, MISSING_OPTIONAL_FORWARD, MISSING_CAPABILITY,
    MISSING_CONDITIONAL_FORWARD, MISSING_DRAFT_FORWARD, CAPABILITY_NOT_DECLARED,
    CAPABILITY_NOT_BACKED, CAPABILITY_UNVERIFIABLE, CAPABILITY_NOT_DECLARABLE, MISSING_IMPLEMENTATION,
    UNREFUSED_CRASH, IMPLEMENTABLE, BROKEN_FORWARD, MISSING_OPTIONAL_IMPLEMENTATION,
    MISSING_CONDITIONAL_IMPLEMENTATION,
)

BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
DEFAULT_SEVERITY: dict[str, Severity] = {rule.code: rule.severity for rule in RULES}
CODES: tuple[str, ...] = tuple(BY_CODE)


def known_codes() -> str:
    """The codes for a message: "SC001, SC002, …"."""
    return ", ".join(CODES)


def readme_section() -> str:
    """The README's table of codes and a short section per code (a test keeps the README equal to it)."""
    rows = ["| code | name | default severity | meaning |", "|---|---|---|---|"]
    rows += [f"| [{r.code}](#{r.anchor}) | {r.name} | {r.severity} | {r.summary} |" for r in RULES]
    for rule in RULES:
        rows += ["", f"#### {rule.code} {rule.name}", "", rule.doc]
    return "\n".join(rows)
