"""What the engine hands to its front ends: call sites, the contract, findings and text edits.

Everything here is plain, immutable data with no reference to ``ast`` nodes, so the CLI can print it, the
language server can convert it to protocol types, and both can compare it between runs.

Positions are 0-based lines and 0-based columns counted in code points (``str`` indices); front ends
convert them (the CLI to 1-based, the server through the negotiated position encoding).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from spec_contract.engine.rules import Severity
from spec_contract.engine.runner_choice import RunnerDefault


class Role(str, enum.Enum):
    """The model object a worker uses a member on: the target model or the draft model.

    A ``str`` so reports, JSON and comparisons with the plain words keep working; ``str()`` is the word.
    """

    TARGET = "target"
    DRAFT = "draft"

    def __str__(self) -> str:
        return self.value


class Phase(str, enum.Enum):
    """When a use runs, read from the worker entry point that reaches it (the profile's ``start-up-methods``):
    while the server starts, after the weights have loaded (the costly case), or in a per-batch method: an unguarded
    use there fails at the first request, a guarded one's degraded path costs every step. A ``str``, as messages
    word it."""

    START_UP = "start-up"
    FIRST_REQUEST = "first request"
    EVERY_STEP = "every step"

    def __str__(self) -> str:
        return self.value

    @property
    def when(self) -> str:
        """The phase as a message says when something happens: "at start-up", "at the first request"."""
        return {Phase.START_UP: "at start-up", Phase.FIRST_REQUEST: "at the first request"}.get(self, self.value)

    @property
    def refused(self) -> str:
        """When the engine's own check, raising in this phase, stops a run: after the weights have loaded it
        costs the load, as a crash does (the words say so)."""
        return {Phase.START_UP: "only after loading the weights",
                Phase.FIRST_REQUEST: "only at the first request"}.get(self, self.value)


@dataclass(frozen=True, order=True)
class Span:
    """A range in a file: ``(line, col)`` to ``(end_line, end_col)``, 0-based, code-point columns."""

    line: int
    col: int
    end_line: int
    end_col: int

    def moved(self, first: int, lines: int) -> Span:
        """This span moved down by ``lines`` (up when negative) if it starts at line ``first`` or below."""
        return Span(self.line + lines, self.col, self.end_line + lines, self.end_col) if self.line >= first else self


@dataclass(frozen=True)
class CallSite:
    """One place in worker code that uses a member of a role's model object."""

    path: str  # absolute path of the worker file
    span: Span  # the member name (``get_embed_and_head``) at this site
    role: Role
    member: str
    text: str  # the source line, stripped, for hover and reports
    guarded: bool  # dominated by hasattr / getattr(..., None) / except AttributeError on the same name
    is_call: bool  # ``m.x(...)``; False for attribute reads such as ``m.hot_token_id``
    arity: int | None = None  # positional arguments passed, when the call has no */** unpacking
    gate: tuple[str, ...] = ()  # the capability gate this use sits behind: its members (any one suffices)
    gate_line: int | None = None  # 0-based line of that gate's test, in the same file
    alternative_of: tuple[str, ...] = ()  # a fallback: reached only when these members are missing
    condition: str | None = None  # a rare condition the use sits under, as written (``envs.X.get()``)
    # the config classes an ``isinstance`` condition asks for: a class whose config is none of them never meets it
    condition_classes: tuple[str, ...] = ()
    algorithm: str | None = None  # the one speculative algorithm whose runs reach it, when one alone does
    unless: str | None = None  # the receiver is this object only on classes that lack this member
    # reached by a worker that takes any registered model as its draft (the profile's ``any-draft-workers``;
    # always, when it names none): a draft use elsewhere only ever meets the draft heads of its algorithm
    any_draft: bool = True
    phase: Phase = Phase.FIRST_REQUEST  # when the use runs: reached from a start-up method, else per request
    # names of the enclosing tests (and ``and`` operands) it runs past, and of those every call of the private
    # helper it sits in runs past (see ``contract._entered_past``)
    taken: frozenset[str] = frozenset()
    # a guarded read whose value the worker stores on another model object under the same name (vLLM 0.25.1's
    # ``eagle_model.lm_head = target_lm_head``): when the read finds nothing, that object keeps its own, so
    # the guard is only as good as the drafts that have one (see ``check.shares``)
    shared: bool = False
    # a draft use in drafters the workers hand only some draft classes (see ``routed``): a class meets it when,
    # for one of the pairs, it is (or derives from) a class named in the first and none named in the second
    only: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    statement: bool = False  # a call that is a statement of its own (``m.x(...)`` alone): made for its effect
    # the speculative algorithms whose runs reach it (None: every run); see ``runs`` and ``resolve.algorithms``
    algorithms: frozenset[str] | None = None
    # every run of those algorithms reaches it: the tests it runs past (``taken``) only select speculative runs
    # or algorithms (a use past ``self._projection_enabled and …`` runs only when a flag nothing here follows is set)
    certain: bool = True
    # made at start-up in a function any run reaches (the model runner's, while it loads the model), not in an
    # algorithm's own workers, which start after it
    loading: bool = False
    # members the model must have for a run to come here, whatever member the line uses: the line sits under a
    # test of a worker attribute that only a test of that model for them sets (``if self._local_argmax:`` where
    # ``self._local_argmax = hasattr(self.model, "compute_draft_logits_local")``), or in a private helper every call
    # to which does (see ``contract._entered_past``), or under such a test written in its own function (``if
    # hasattr(model, "a"): model.b``); a class without one never meets the use; ``*``: the use's own member (a
    # helper's ``isinstance`` test of the model, standing behind the state: whatever the use reads)
    requires: tuple[str, ...] = ()

    def serves(self, algorithm: str) -> bool:
        """Whether a run of ``algorithm`` may reach this use."""
        return self.algorithms is None or algorithm in self.algorithms


@dataclass(frozen=True)
class ContractEntry:
    """A member that workers use on one role's model, with every place that uses it."""

    role: Role
    member: str
    call_sites: tuple[CallSite, ...]

    @property
    def required(self) -> bool:
        """Required when any site is unguarded: one unguarded use is enough to crash."""
        return any(not site.guarded for site in self.call_sites)

    @property
    def is_call(self) -> bool:
        return any(site.is_call for site in self.call_sites)


NO_ALGORITHM = "NONE"  # the enum member of a run without speculative decoding: never shown as an algorithm


@dataclass(frozen=True)
class Algorithms:
    """The speculative algorithms of a release and what was read about them (see ``resolve.algorithms``)."""

    names: tuple[str, ...]  # upper case, in the release's order, NONE left out
    universe: frozenset[str]  # every value a run's algorithm may have (NONE included when the release has it)
    spellings: tuple[tuple[str, str], ...] = ()  # a spelling a launch or a test may use (upper case) → its name
    literals: tuple[tuple[str, tuple[str, ...]], ...] = ()  # a Literal alias → the names its strings spell
    predicates: tuple[tuple[str, tuple], ...] = ()  # methods beside the names: name → what they return
    where: tuple[str, int] | None = None  # (path, 0-based line) of the place a launch's name is checked
    choices: tuple[str, ...] | None = None  # the option's argparse choices, as written (None: no such list)
    # the profile's ``[[algorithms]]`` when nothing could be read: each name's worker files
    files: tuple[tuple[str, tuple[str, ...]], ...] = ()
    derived: bool = True  # read from the release; False: the profile's names
    # an algorithm → the architectures its draft can have, where the config rewrites every other, and the
    # (path, 0-based line) that says so (see ``resolve.algorithm_drafts``)
    drafts: tuple[tuple[str, tuple[str, ...], tuple[str, int]], ...] = ()

    def name_of(self, spelling: str) -> str | None:
        """The algorithm a launch or a comparison spelling ``spelling`` (any case) names; None: none."""
        wanted = spelling.strip().upper()
        return dict(self.spellings).get(wanted)


@dataclass(frozen=True)
class Contract:
    """role → member → uses, derived from the workers of one tree (or of the installed engine)."""

    entries: tuple[ContractEntry, ...] = ()
    # the classes the workers route to a drafter by an ``isinstance`` test (see ``routed``): drafts, never targets
    routed: tuple[str, ...] = ()
    # the worker functions (module, qualname) that run while the server starts (see ``start_up``): the phase of
    # any worker line, a use's or a capability check's
    start_up: frozenset[tuple[str, str]] = frozenset()
    # the release's speculative algorithms and what was read about them (see ``resolve.algorithms``)
    release: Algorithms | None = None
    # the worker functions (module, qualname) some run does not reach, with the algorithms' runs that do (see
    # ``runs``): what a line there serves before its own tests narrow it (``runs.Served`` reads it)
    function_runs: tuple[tuple[tuple[str, str], frozenset[str]], ...] = ()
    # members the engine calls on its model outside speculative paths too (the model runner's
    # ``self.model.get_input_embeddings()``): every model may have them for that, so having one says nothing of
    # an algorithm
    generic: frozenset[str] = frozenset()
    # which models run on the V2 model runner unless the user picks one, as the engine's function says (see
    # ``resolve.runner_default``; None: the profile names none, or the tree lacks it)
    runner_default: RunnerDefault | None = None

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The release's algorithms, as a launch names them."""
        return self.release.names if self.release is not None else ()

    def get(self, role: Role, member: str) -> ContractEntry | None:
        for entry in self.entries:
            if entry.role == role and entry.member == member:
                return entry
        return None

    def for_role(self, role: Role) -> tuple[ContractEntry, ...]:
        return tuple(e for e in self.entries if e.role == role)

    def members(self) -> set[str]:
        return {e.member for e in self.entries}


@dataclass(frozen=True)
class Provider:
    """Where an inner class gets a contract member from (for related information and the stub)."""

    class_name: str  # qualified name, e.g. "sglang.srt.models.deepseek_v2.DeepseekV2ForCausalLM"
    path: str
    span: Span  # the member's name in its definition
    kind: str  # "method", "async_method", "property", "attribute"


class How(str, enum.Enum):
    """How a member a class lacks can be provided (see ``check.status``); a ``str``, as hover words it."""

    FORWARD = "forward"  # an inner model has it: delegate to it
    IMPLEMENT = "implement"  # no inner has it; a class holding the same parts implements it: do as it does
    BOTH = "both"  # the inner model can implement it (so): implement it there, forward it here
    UNKNOWN = "cannot tell"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Capture:
    """The rest of an EAGLE-3 implementation whose decoder does not capture aux hidden states yet: the class's
    ``forward`` unpacks them and hands them to its logits processor, its decoder (``self.<delegate>``, class
    ``decoder`` in ``decoder_path``) records ``expression`` before each layer of ``layers_to_capture`` and
    returns them, as the decoder ``like`` does (see :mod:`spec_contract.engine.check.capture`)."""

    delegate: str
    decoder: str  # the decoder's qualified name in its module
    decoder_path: str
    like: str  # the dotted name of the decoder whose forward is the model (empty: none, see ``words``)
    expression: str  # what that forward records per captured layer (``hidden_states + residual``); empty:
    # the decoder captures already, only the class's ``forward`` is changed

    def words(self) -> str:
        """What the fix changes beside the member, as every front end says it."""
        decoder = self.decoder.rsplit(".", 1)[-1]
        if not self.expression:
            return f" (also makes its forward hand the aux hidden states `{decoder}` captures to its logits processor)"
        if not self.like:
            return (f" (also makes `{decoder}.forward` capture aux hidden states: its `hidden_states` before each "
                    "captured layer)")
        return f" (also makes `{decoder}.forward` capture aux hidden states like `{self.like.rsplit('.', 1)[-1]}.forward`)"


@dataclass(frozen=True)
class Provision:
    how: How
    delegate: str | None = None  # forward / both: the attribute path of the inner model
    inner_class: str | None = None  # forward: the inner class that has it; both: the inner that would implement it
    like: str | None = None  # implement / both: the dotted name of the class whose body is the model
    why: str = ""  # cannot tell: why (which attribute the closest candidate reads that this class lacks)
    body: str = ""  # implement / both: the candidate's definition (decorators and signature), dedented
    path: str | None = None  # implement / both: the file of the class to implement it in
    in_class: str | None = None  # both: that class's qualified name in its module (implement: the class itself)
    like_path: str | None = None  # implement / both: the file of the model, and the 0-based line of its ``def``
    like_line: int | None = None
    capture: Capture | None = None  # implement / both: the decoder and forward changes the body needs too


@dataclass(frozen=True)
class Forward:
    """One more member a capability finding's fix forwards (the members the algorithm needs past its gate)."""

    member: str
    delegate: str
    inner_class: str
    provider: Provider


@dataclass(frozen=True)
class Listed:
    """A class a worker-line finding lists (SC011): where it is and the members it lacks there."""

    path: str
    class_name: str
    class_qualname: str
    members: tuple[str, ...]
    implements: tuple[tuple[str, Provision], ...] = ()  # how each member can be implemented, where a model fits


@dataclass(frozen=True)
class Finding:
    """A class that fails to provide a contract member (or a worker line where classes do, SC011)."""

    code: str  # a code of :mod:`spec_contract.engine.rules`
    severity: Severity
    path: str
    span: Span  # the class name
    class_name: str  # short name, e.g. "KimiK25ForConditionalGeneration"
    class_qualname: str  # module-qualified name
    member: str
    roles: tuple[Role, ...]  # the roles whose contract asks for the member
    delegate: str  # attribute path on self, e.g. "language_model" or "minicpmv.llm"
    inner_class: str  # short name of the inner class that provides the member
    provider: Provider
    call_sites: tuple[CallSite, ...]
    message: str = ""
    notes: tuple[str, ...] = field(default=())  # e.g. arity mismatches between call sites and provider
    algorithm: str | None = None  # the algorithm whose runs fail (a check's, a worker line's), if one
    condition: str | None = None  # SC004: the rare condition every use sits under
    also: tuple[Forward, ...] = ()  # SC001 at an engine's check: the members past it the fix forwards too
    # SC009/SC011: how the fix provides each member (implement like a candidate, or implement in the inner model
    # and forward here), the finding's own first
    implements: tuple[tuple[str, Provision], ...] = ()
    # SC010/SC011 when no model fits and the fix must edit a part too (a decoder that lacks the member while the
    # decoders other classes hand it to have it): the member and why nothing fits, naming that part
    unfit: tuple[tuple[str, Provision], ...] = ()
    # a worker line's finding (SC011): the classes that crash there, each with its members, and the finding of each
    # class at its own line, which a front end shows where it shows that class's file alone (``check FILE``, an
    # editor's diagnostics of the file): one truth about a class wherever it is asked
    classes: tuple[Listed, ...] = ()
    records: tuple[Finding, ...] = ()

    @property
    def role(self) -> Role:
        return self.roles[0]


@dataclass(frozen=True)
class TextEdit:
    """Replace ``span`` in ``path`` by ``new_text`` (an insertion when the span is empty)."""

    path: str
    span: Span
    new_text: str
