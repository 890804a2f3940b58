"""The profile and user settings that steer one analysis, merged from their sources.

Precedence, lowest first: the built-in profile (TOML shipped in ``spec_contract/profiles``), the checked
tree's ``[tool.spec-contract]`` table (or a ``--config`` file), then overrides from the CLI or the editor.
List keys may be replaced (``workers = [...]``) or extended (``extend-workers = [...]``). Every key is declared
once in :data:`SETTINGS` (kind, default, docs) and every value, whatever its source, passes through
:func:`validate`; every problem is a :class:`ConfigError` with a one-line message naming the key.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import sys
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from spec_contract.engine.engines import Detected, Layout, detect, holds_package, rebased
from spec_contract.engine.read.files import read_bytes
from spec_contract.engine.results import Role
from spec_contract.engine.rules import DEFAULT_SEVERITY, Severity, known_codes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    # mypy checks for 3.10 (pyproject.toml) where this interpreter may have no tomli; where it has, nothing to ignore
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

SEVERITIES = tuple(level.value for level in Severity)
DEFAULT_PROFILE = "sglang"  # a tree whose layout no profile knows
_ROLES = tuple(role.value for role in Role)
DEFAULT_EXCLUDE = (
    "**/.git/**", "**/.venv/**", "**/venv/**", "**/node_modules/**", "**/__pycache__/**", "**/.tox/**",
    "**/build/**", "**/dist/**",
)


class ConfigError(ValueError):
    """A profile or setting that cannot be used; the message is one line naming the problem."""


@dataclass(frozen=True)
class ReceiverPattern:
    """An expression shape that denotes a role's model object (see the profile's ``[[receivers]]``)."""

    segments: tuple[str, ...]  # "*" first when any prefix is allowed; "[]" subscript, "()" call
    role: Role
    classes: tuple[str, ...] = ()
    speculative: bool = False
    # a member whose providers never reach this pattern: an engine that switches to the language model when
    # the target has ``get_language_model`` uses this object only on classes without it
    unless: str | None = None

    def matches(self, chain: tuple[str, ...], class_name: str | None) -> bool:
        """Whether ``chain``, used in a method of ``class_name``, denotes this pattern's model object.

        A leading ``*`` matches any prefix, the empty one too (``target_worker.model_runner.model`` on a
        parameter named ``target_worker``). A pattern limited to classes matches ``self`` only inside them;
        a ``self`` chain that flowed out of such a class arrives as ``self@Class``.
        """
        if self.segments[0] == "*":
            tail = self.segments[1:]
            return len(chain) >= len(tail) and chain[len(chain) - len(tail):] == tail
        if self.classes and chain and chain[0].startswith("self@"):
            return chain[0][5:] in self.classes and chain[1:] == self.segments[1:]
        if self.classes and class_name not in self.classes:
            return False
        return chain == self.segments


@dataclass(frozen=True)
class Algorithm:
    """A speculative algorithm (the profile's ``[[algorithms]]``): which worker uses belong to it, and which
    algorithms' capability gates its runs pass first."""

    name: str
    files: tuple[str, ...] = ()  # worker files that only this algorithm runs
    conditions: frozenset[str] = frozenset()  # names whose test selects it (``is_eagle3``, ``dflash_…``)
    gated_by: tuple[str, ...] = ()  # other algorithms whose gates its runs pass too (DSPARK: DFLASH's)


@dataclass(frozen=True)
class Runner:
    """A model runner of the engine (the profile's ``[[runners]]``): the files of its speculative code, and the
    engine's function that lists what it does not run (see ``resolve.runners``)."""

    refusals: str  # dotted function or method (vLLM's ``VllmConfig._get_v1_model_runner_unsupported_features``)
    files: tuple[str, ...]  # globs of the runner's files
    # dotted function that says whether a model's runs default to this runner (vLLM's V2
    # ``VllmConfig._is_default_v2_model_runner_model``; see ``resolve.runner_default``), "" when none does
    default: str = ""


@dataclass(frozen=True)
class Capability:
    """A capability an engine declares with a runtime-checkable Protocol and refuses at start-up unless the
    model passes ``isinstance`` (the profile's ``[[capabilities]]``, e.g. vLLM's ``SupportsEagle3``).

    The Protocol's default methods delegate by themselves: to ``language_method()`` when the class has it,
    else to ``self.<language_attr>``, else to ``self``; then to that object's ``.<holder_attr>`` when it has
    one; and the object they end at must be a ``holder_mixin``.
    """

    name: str  # the algorithm it enables (EAGLE3)
    protocol: str  # dotted class of the Protocol
    check: str  # the function workers gate with (``supports_eagle3``)
    marker: str  # the ``ClassVar[Literal[True]]`` flag the Protocol sets (structural declarations set it too)
    holder_mixin: str | None = None  # dotted class the defaults assert the holder is
    holder_method: str | None = None  # the default method that asserts it (another class's override skips it)
    language_method: str = "get_language_model"
    language_attr: str = "language_model"
    holder_attr: str = "model"


@dataclass(frozen=True)
class RoleFacts:
    """What an analysis read from the tree about the roles classes can play (``resolve.role_facts``): the
    engine's own answers, by class name, which the profile's class globs only stand in for where the code
    says nothing."""

    never_targets: frozenset[str] = frozenset()  # the engine's generation test refuses them
    # the generation test accepts them (and the engine names none of them a draft head): no class glob that
    # would take the target role from them holds
    targets: frozenset[str] = frozenset()
    draft_heads: frozenset[str] = frozenset()  # the engine loads them as drafts only (draft registry, rewrites)


@dataclass(frozen=True)
class Config:
    """Everything that steers one analysis of one tree."""

    profile: str
    engine_package: str  # the import package of the engine, looked up for out-of-tree model packages
    workers: tuple[str, ...]
    model_files: tuple[str, ...]
    entry_class_variable: str | None
    delegate_names: tuple[str, ...]
    speculative_conditions: frozenset[str]
    ignored_members: frozenset[str]
    draft_only_classes: tuple[str, ...]
    registry_candidates: tuple[str, ...]  # dotted classes an inner chosen through the model registry may be
    receivers: tuple[ReceiverPattern, ...]
    severity: dict[str, Severity] = field(default_factory=lambda: dict(DEFAULT_SEVERITY))
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    enable: bool = True
    select: frozenset[str] = frozenset(DEFAULT_SEVERITY)
    baseline: str | None = None  # absolute path of the baseline file (see ``engine.baseline``)

    algorithms: tuple[Algorithm, ...] = ()
    # where the release names its speculative algorithms (an Enum class or a Literal alias, dotted in the engine
    # package), the setting a launch names one in, and the files where the engine reads that setting (its
    # spellings and choices): see ``resolve.algorithms``
    algorithm_names: tuple[str, ...] = ()
    algorithm_option: str = "speculative_algorithm"
    algorithm_option_files: tuple[str, ...] = ()
    non_target_classes: tuple[str, ...] = ()  # classification, reward, embedding models: never served as targets
    # the engine's function that says which architectures generate (dotted, in the engine package): read from
    # the tree by the analysis (``resolve.generation``)
    generation_test: str | None = None
    # where the engine names its draft heads: functions that rewrite a draft checkpoint's architecture
    # (dotted, in the engine package), and the registry tables of draft models (``resolve.draft_heads``)
    draft_rewrites: tuple[str, ...] = ()
    draft_tables: tuple[str, ...] = ()
    read_roles: RoleFacts = field(default_factory=lambda: RoleFacts())  # what the analysis read from the tree
    draft_classes: tuple[str, ...] = ()  # besides draft-only ones, classes a config rewrite loads as drafts
    # worker classes that take any registered model as their draft (vLLM's DraftModelProposer); see CallSite.any_draft
    any_draft_workers: tuple[str, ...] = ()
    # worker flags (attributes, config fields) that are off unless a user turns them on: a use in the true branch
    # of a test of one is under a rare condition
    off_by_default: tuple[str, ...] = ()
    # globs of worker method names that run while the server starts (after the weights load); a use reached from
    # one fails at start-up, any other use at the first request (see ``CallSite.phase``)
    start_up_methods: tuple[str, ...] = ("__init__",)
    # globs of files outside the workers whose start-up methods call the workers' entry points (see
    # ``contract.called_at_start_up``)
    start_up_callers: tuple[str, ...] = ()
    # The engine's model registry as data (vLLM's ``registry.py``): files holding module-level dicts
    # ``"Arch": ("module", "Class")``, and the dicts whose classes are the registered (checked) models
    registry_files: tuple[str, ...] = ()
    restrict_delegates: bool = False  # only ``delegate_names`` attributes hold inner models (not just first)
    registry_tables: tuple[str, ...] = ()
    capabilities: tuple[Capability, ...] = ()
    runners: tuple[Runner, ...] = ()
    # why the profile and the engine package were chosen, when the tree's layout or name chose them (one line)
    chosen: str | None = None

    def roles_for_class(self, name: str) -> tuple[Role, ...]:
        """The roles a class of that name can play: the draft only when it is a draft head, or the engine's
        generation test refuses it, or a ``non-target-classes`` glob names it; else both (see :meth:`draft_only`
        and :class:`RoleFacts`: the code's answers are preferred over the globs)."""
        read = self.read_roles
        if name in read.never_targets or self.draft_only(name):
            return (Role.DRAFT,)
        if name not in read.targets and named_by(name, self.non_target_classes):
            return (Role.DRAFT,)
        return (Role.TARGET, Role.DRAFT)

    def draft_only(self, name: str) -> bool:
        """Whether the class only ever acts as a draft: the engine names it as a draft head (its draft registry,
        a draft-config rewrite), or its name has a draft head's shape (``draft-only-classes``) and the engine's
        generation test does not accept it as a model it serves."""
        read = self.read_roles
        return name in read.draft_heads or name not in read.targets and named_by(name, self.draft_only_classes)

    def draft_shaped(self, name: str) -> bool:
        """Whether the class is a draft model by shape (an EAGLE/NextN/MTP head) or by a config rewrite:
        draft-role members missing elsewhere only matter if a draft checkpoint names the class."""
        return self.draft_only(name) or named_by(name, self.draft_classes)

    def loaded_as_draft(self, name: str) -> bool:
        """Whether a config rewrite loads every draft checkpoint of a run as this class (``draft_classes``:
        MindSpore's loader names ``MindSporeForCausalLM`` for each model under ``--model-impl mindspore``), so
        a draft use it lacks crashes every such run, as a target use does."""
        return named_by(name, self.draft_classes)


# A check asks these of each class for each contract site (vLLM 0.33.0: some 50 000 glob matches a run)
@functools.lru_cache(maxsize=4096)
def named_by(name: str, globs: tuple[str, ...]) -> bool:
    """Whether a class name matches one of a profile's class globs (see :func:`_class_globs`)."""
    pattern = _class_globs(globs)
    return pattern is not None and pattern.fullmatch(name) is not None


_WORD_START = r"(?:^|(?<![A-Za-z])|(?=[A-Z]))"  # the name's start, a capital, or a letter after a non-letter


@functools.lru_cache(maxsize=64)
def _class_globs(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for a profile's class-name globs (``*`` any run of characters, ``?`` one; nothing else is
    special). The words they name match in any capitalisation, since class names spell the same head
    ``DSpark``, ``Dspark`` or ``DSPARK``; a word that follows a ``*`` must begin a word of the name (be
    capitalised there, follow a non-letter, or start it), so ``*DSpark*`` names ``Qwen3DSparkModel`` and
    ``DsparkDraftModel`` but ``*MTP*`` never the ``…RMSNormTP`` of a layer, nor ``*XPress*`` a
    ``ModelExpress…``."""
    if not globs:
        return None
    alternatives = []
    for glob in globs:
        parts, after_star = [], False
        for piece in re.split(r"([*?])", glob):
            if piece == "*":
                parts.append(".*")
            elif piece == "?":
                parts.append(".")
            elif piece:
                start = _WORD_START if after_star and piece[0].isalpha() else ""
                parts.append(f"{start}(?i:{re.escape(piece)})")
            after_star = piece == "*" or (after_star and not piece)
        alternatives.append("".join(parts))
    return re.compile("|".join(f"(?:{a})" for a in alternatives))


def parse_chain(text: str) -> tuple[str, ...]:
    """``*.draft_runner_list[*].model`` → ``("*", "draft_runner_list", "[]", "model")``."""
    segments: list[str] = []
    for part in text.split("."):
        name = part.replace("[*]", "").replace("()", "")
        if not name or not (name == "*" or name.isidentifier()):
            raise ConfigError(f"receiver pattern {text!r}: {part!r} is not a name, '*', 'name[*]' or 'name()'")
        segments.append(name)
        rest = part[len(name):]
        while rest:
            if rest.startswith("[*]"):
                segments.append("[]")
                rest = rest[3:]
            elif rest.startswith("()"):
                segments.append("()")
                rest = rest[2:]
            else:  # pragma: no cover - guarded by the replace() above
                raise ConfigError(f"receiver pattern {text!r}: cannot read {part!r}")
    if "*" in segments[1:]:
        raise ConfigError(f"receiver pattern {text!r}: '*' may only stand first")
    return tuple(segments)


def available_profiles() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files("spec_contract.profiles").iterdir() if p.name.endswith(".toml"))


def _builtin_profile(name: str) -> dict[str, Any]:
    """A profile's settings (its ``[layout]`` table, which is no setting, aside: see :func:`_layouts`)."""
    data = _profile_data(name)
    return {key: value for key, value in data.items() if key != "layout"}


def _profile_data(name: str) -> dict[str, Any]:
    if name not in available_profiles():
        raise ConfigError(f"unknown profile {name!r} (available: {', '.join(available_profiles())})")
    return copy.deepcopy(_parsed_profile(name))  # the caller's own: a change to it never reaches the next one


@functools.cache
def _parsed_profile(name: str) -> dict[str, Any]:
    """A shipped profile's TOML, parsed once per process: a check loads the configuration twice (to find
    the project, then the project's own), each time with every profile's layout, which made four parses of
    0.8 ms each; the files are part of the installed package and do not change under a running process."""
    text = resources.files("spec_contract.profiles").joinpath(f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _layouts() -> list[Layout]:
    """Each built-in profile's ``[layout]``: the paths that make a package look like its engine."""
    out = []
    for name in available_profiles():
        data = _profile_data(name)
        layout = data.get("layout", {})
        out.append(Layout(name, layout.get("engine", name), data.get("engine_package", name),
                          tuple(layout.get("paths", ()))))
    return out


# -- the settings schema: one list of keys, their kinds and their docs -------------------------------------

@dataclass(frozen=True)
class Setting:
    """One key of ``[tool.spec-contract]`` / the editor's ``specContract`` section.

    ``where`` says who reads it: ``"all"`` (pyproject, ``--config`` and the editor), ``"tree"`` (pyproject and
    ``--config`` only: profile data and paths relative to the file), ``"editor"`` (the language server only)
    or ``"client"`` (the editor extension only: accepted and ignored here). List keys marked ``extend`` also
    take ``extend-<key>``, which adds to the profile's list instead of replacing it.
    """

    name: str  # kebab-case, as written in pyproject.toml (camelCase in editor settings)
    kind: str  # see _KINDS
    default: str  # for the docs
    doc: str
    where: str = "all"
    extend: bool = False

    @property
    def camel(self) -> str:
        first, *rest = self.name.split("-")
        return first + "".join(word.capitalize() for word in rest)


SETTINGS: tuple[Setting, ...] = (
    Setting("enable", "bool", "`true`", "`false` turns the tool off for this project: the editor shows nothing, and "
            "`check` skips the project with a one-line note on standard error (exit 0)."),
    Setting("profile", "string", '`"sglang"`', "The built-in engine profile the other keys extend or override."),
    Setting("select", "codes", "every code", "The codes to report, e.g. `[\"SC001\"]` (a comma-separated string "
            "works too); `--select` narrows it on the command line."),
    Setting("severity", "severity", "per rule", "Severity per code: `{SC002 = \"warning\"}` "
            f"({', '.join(SEVERITIES[:-1])} or {SEVERITIES[-1]})."),
    Setting("include", "strings", "`[]` (everything)", "Globs of files to analyse, relative to the project root.",
            extend=True),
    Setting("exclude", "strings", "build, dist, .venv, … and the profile's", "Globs of files and folders never "
            "analysed.", extend=True),
    Setting("baseline", "path", "none", "A baseline file (written by `check --write-baseline FILE`), relative to "
            "this pyproject.toml: only findings not in it fail `check`; the editor shows the others as hints.",
            where="tree"),
    Setting("workers", "strings", "the profile's", "Globs of the worker files whose code makes the contract.",
            where="tree", extend=True),
    Setting("model-files", "strings", "the profile's", "Globs of the files whose classes are models.",
            where="tree", extend=True),
    Setting("engine-package", "string", "the profile's name", "The engine's import package, read from "
            "`--python`'s environment for an out-of-tree package of models. In a tree with an engine's layout, "
            "one that names nothing there gives way to the package the layout finds, and one line says so.",
            where="tree"),
    Setting("entry-class-variable", "string", '`"EntryClass"`', "The module-level variable that registers a "
            "file's model classes; only registered classes are checked as wrappers.", where="tree"),
    Setting("delegate-names", "strings", "the profile's", "Attribute names a wrapper keeps its inner model in "
            "(looked at first).", where="tree", extend=True),
    Setting("restrict-delegates", "bool", "`false`", "`true`: only the attributes `delegate-names` lists hold "
            "inner models (others, such as a `logits_processor`, are helpers never forwarded to).", where="tree"),
    Setting("speculative-conditions", "strings", "the profile's", "Names whose test in an enclosing `if` marks a "
            "speculative-decoding-only path in a model runner.", where="tree", extend=True),
    Setting("ignored-members", "strings", "`torch.nn.Module`'s", "Members every model has: never part of the "
            "contract.", where="tree", extend=True),
    Setting("draft-only-classes", "strings", "the profile's", "Globs of class names that only act as the draft "
            "model, besides those `draft-rewrites` and `draft-tables` name; a word after a `*` matches in any "
            "capitalisation where a word of the name begins (`*DSpark*` names `Qwen3DsparkModel`).",
            where="tree", extend=True),
    Setting("registry-candidates", "strings", "the profile's", "Dotted classes an inner model chosen through "
            "the engine's model registry may be.", where="tree", extend=True),
    Setting("algorithm-names", "strings", "the profile's", "Where the release names its speculative "
            "algorithms: an `Enum` class (its members; SGLang's `SpeculativeAlgorithm`) or a `Literal` alias (its "
            "strings; vLLM's `SpeculativeMethod`), dotted in the engine package, read, never run. The predicates "
            "beside them (`is_eagle3()`, `use_dflash()`) and the flags the workers set under them tell which "
            "algorithms each worker line serves.", where="tree", extend=True),
    Setting("algorithm-option", "string", "`\"speculative_algorithm\"`", "The setting a launch names the "
            "algorithm in (vLLM's `method`): where the engine compares it with a spelling and sets it to another "
            "(`NEXTN` read as `EAGLE`), or lists argparse `choices`, is read in `algorithm-option-files`.",
            where="tree"),
    Setting("algorithm-option-files", "strings", "the profile's", "Globs of the files where the engine reads "
            "`algorithm-option`.", where="tree", extend=True),
    Setting("algorithms", "algorithms", "`[]`", "Tables `{name, files, conditions, gated-by}`: speculative "
            "algorithms for a tree whose `algorithm-names` say nothing (a fork that moved them): the worker files "
            "and test names that select each, and whose test names its runs pass too.", where="tree",
            extend=True),
    Setting("non-target-classes", "strings", "the profile's", "Globs of class names never served as the target "
            "model (classification, reward, embedding models), besides the classes `generation-test` names.",
            where="tree", extend=True),
    Setting("generation-test", "string", "the profile's", "The engine's function that says whether an "
            "architecture generates (SGLang's `sglang.srt.configs.model_config.is_generation_model`, vLLM's "
            "`vllm.model_executor.models.interfaces_base.is_text_generation_model`), read, never run: the classes "
            "named in `\"X\" in <parameter>` tests of a branch that returns `False` are never served as the target "
            "model, and where it returns `isinstance(<parameter>, P)` a registered class lacking a member the "
            "Protocol `P` defines is never one (a class that has them all is, whatever `non-target-classes` "
            "says). A path that names no function of a tree holding its package is a configuration error; `\"\"` "
            "reads none.",
            where="tree"),
    Setting("draft-rewrites", "strings", "the profile's", "Dotted functions or methods of the engine that rewrite "
            "a draft checkpoint's architecture (SGLang's `ModelConfig._config_draft_model`), read, never run: "
            "every architecture they write (`….architectures[0] = \"X\"`, `{\"architectures\": [\"X\"]}`) is "
            "a draft head, never served as the target model.", where="tree", extend=True),
    Setting("draft-tables", "strings", "the profile's", "The `registry-tables` dicts that register draft heads "
            "(vLLM's `_SPECULATIVE_DECODING_MODELS`): a class registered there and in no other of them is never "
            "served as the target model.", where="tree", extend=True),
    Setting("draft-classes", "strings", "the profile's", "Globs of class names a config rewrite loads as draft "
            "models (besides the draft-only ones).", where="tree", extend=True),
    Setting("any-draft-workers", "strings", "the profile's", "Names of the worker classes that take any "
            "registered model as their draft (vLLM's `DraftModelProposer`). When set, a draft member missing on a "
            "class that is not a draft by shape counts only where such a worker reaches it: its own methods and "
            "those it inherits without overriding, on a line its runs reach (not under a flag only other runs "
            "set). Other proposers load only their own draft heads.",
            where="tree", extend=True),
    Setting("off-by-default", "strings", "the profile's", "Names of worker flags, attributes or config fields, "
            "that are off unless a user turns them on (vLLM's `use_local_argmax_reduction`, `False` in "
            "`SpeculativeConfig`). A use in the true branch of a test of one runs only under that rare "
            "condition: SC004 rather than SC001/SC005.", where="tree", extend=True),
    Setting("start-up-methods", "strings", "the profile's", "Globs of worker method names that run while the "
            "server starts, after the weights load (`__init__`, `init_*`): a use they reach fails at start-up, "
            "any other use at the first request.", where="tree", extend=True),
    Setting("start-up-callers", "strings", "`[]`", "Globs of files outside the workers whose start-up methods "
            "call into them (tokenspeed's model executor calls its drafter's `wire_target` in `__init__`): a "
            "worker function no worker calls runs at start-up when such a method calls it by name. Only their "
            "calls are read, never their uses.", where="tree", extend=True),
    Setting("registry-files", "strings", "the profile's", "Globs of the files whose module-level dicts "
            "`\"Arch\": (\"module\", \"Class\")` register the engine's models (vLLM's `registry.py`); "
            "`init_vllm_registered_model(architectures=[\"Arch\"])` resolves through them.", where="tree",
            extend=True),
    Setting("registry-tables", "strings", "the profile's", "The dicts of `registry-files` whose classes are the "
            "registered models checked as wrappers (instead of `entry-class-variable`).", where="tree", extend=True),
    Setting("capabilities", "capabilities", "the profile's", "Tables `{name, protocol, check, marker, "
            "holder-mixin, holder-method}`: capabilities declared with a runtime-checkable Protocol and gated with "
            "`check(model)` (vLLM's `SupportsEagle3`).", where="tree", extend=True),
    Setting("runners", "runners", "the profile's", "Tables `{refusals, files, default}`: a model runner's files, "
            "the engine's function that lists what it does not run (vLLM's `VllmConfig._get_v1_model_runner_"
            "unsupported_features`), read, never run: an algorithm it appends for under a test every run of the "
            "algorithm passes never reaches those files; and the function that says which models default to it "
            "(`default`, vLLM's `_is_default_v2_model_runner_model`).", where="tree", extend=True),
    Setting("receivers", "receivers", "the profile's", "Tables `{pattern, role, classes, speculative, "
            "unless}`: expression shapes that denote a role's model object (`unless`: not on classes that "
            "provide that member).", where="tree", extend=True),
    Setting("debounce", "milliseconds", "`150`", "Milliseconds to wait after a keystroke before re-checking.",
            where="editor"),
    Setting("interpreter", "client", "the Python extension's", "The Python that runs the server (VS Code).",
            where="client"),
    Setting("import-strategy", "client", "`useBundled`", "Which server runs: the one the extension carries "
            "(`useBundled`) or the one installed in the interpreter's environment (`fromEnvironment`) (VS Code).",
            where="client"),
    Setting("server", "client", "`spec-contract serve`", "The command that starts the server: `server.command` "
            "(a command of your own) and `server.args` (arguments appended) (VS Code).", where="client"),
    Setting("trace", "client", "`off`", "Protocol tracing in the output channel (VS Code).", where="client"),
)
BY_NAME: dict[str, Setting] = {s.name.replace("-", "_"): s for s in SETTINGS}
MAX_DEBOUNCE_MS = 10_000


def settings_table() -> str:
    """The README's table of keys (a test keeps the README equal to it)."""
    rows = ["| key (`[tool.spec-contract]` / `specContract.`) | where | default | meaning |", "|---|---|---|---|"]
    where = {"all": "pyproject, editor", "tree": "pyproject", "editor": "editor", "client": "VS Code"}
    for s in SETTINGS:
        key = f"`{s.name}`" + (f" / `extend-{s.name}`" if s.extend else "")
        if s.camel != s.name and s.where != "tree":
            key += f" (`{s.camel}`)"
        rows.append(f"| {key} | {where[s.where]} | {s.default} | {s.doc} |")
    return "\n".join(rows)


def editor_settings_table() -> str:
    """The VS Code extension README's table: the keys an editor sets in its ``specContract`` section, from the
    same schema as :func:`settings_table` (a test keeps the README equal to it)."""
    rows = ["| setting | default | meaning |", "|---|---|---|"]
    rows += [f"| `specContract.{s.camel}` | {s.default} | {s.doc} |" for s in SETTINGS if s.where != "tree"]
    return "\n".join(rows)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _strings_of(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _receiver(raw: Any, where: str) -> ReceiverPattern:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table with 'pattern' and 'role', got {_show(raw)}")
    unknown = sorted(set(raw) - {"pattern", "role", "classes", "speculative", "unless"})
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: pattern, role, classes, speculative, unless)")
    if "pattern" not in raw or "role" not in raw:
        raise ConfigError(f"{where}: each receiver needs a 'pattern' and a 'role'")
    if not isinstance(raw["pattern"], str):
        raise ConfigError(f"{where}.pattern must be a string, got {_show(raw['pattern'])}")
    if raw["role"] not in _ROLES:
        raise ConfigError(f"{where}: receiver {raw['pattern']!r}: role must be "
                          f"{' or '.join(repr(role) for role in _ROLES)}, not {_show(raw['role'])}")
    classes = _strings_of(raw.get("classes", []))
    if classes is None:
        raise ConfigError(f"{where}.classes must be a list of class names, got {_show(raw['classes'])}")
    speculative = raw.get("speculative", False)
    if not isinstance(speculative, bool):
        raise ConfigError(f"{where}.speculative must be true or false, got {_show(speculative)}")
    unless = raw.get("unless")
    if unless is not None and not (isinstance(unless, str) and unless.isidentifier()):
        raise ConfigError(f"{where}.unless must be a member name, got {_show(unless)}")
    return ReceiverPattern(parse_chain(raw["pattern"]), Role(raw["role"]), classes, speculative, unless)


def _algorithm(raw: Any, where: str) -> Algorithm:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ConfigError(f"{where} must be a table with a 'name' string, got {_show(raw)}")
    fields: dict[str, tuple[str, ...]] = {}
    for key, value in raw.items():
        snake = snake_key(str(key))
        if snake == "name":
            continue
        if snake not in ("files", "conditions", "gated_by"):
            raise ConfigError(f"{where}: unknown key {key!r} (known: name, files, conditions, gated-by)")
        strings = _strings_of(value)
        if strings is None:
            raise ConfigError(f"{where}.{key} must be a list of strings, got {_show(value)}")
        fields[snake] = strings
    return Algorithm(raw["name"], fields.get("files", ()), frozenset(fields.get("conditions", ())),
                     fields.get("gated_by", ()))


_CAPABILITY_KEYS = ("name", "protocol", "check", "marker", "holder_mixin", "holder_method", "language_method",
                    "language_attr", "holder_attr")


def _capability(raw: Any, where: str) -> Capability:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table with 'name', 'protocol', 'check' and 'marker', got {_show(raw)}")
    fields: dict[str, str] = {}
    for key, value in raw.items():
        snake = snake_key(str(key))
        if snake not in _CAPABILITY_KEYS:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(k.replace('_', '-') for k in _CAPABILITY_KEYS)})")
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where}.{key} must be a non-empty string, got {_show(value)}")
        fields[snake] = value
    missing = [k for k in _CAPABILITY_KEYS[:4] if k not in fields]
    if missing:
        raise ConfigError(f"{where}: each capability needs {', '.join(repr(k) for k in missing)}")
    return Capability(**fields)


def _runner(raw: Any, where: str) -> Runner:
    if not isinstance(raw, dict) or not {"refusals", "files"} <= set(raw) <= {"refusals", "files", "default"}:
        raise ConfigError(f"{where} must be a table with 'refusals' and 'files' (and optionally 'default'), "
                          f"got {_show(raw)}")
    refusals, files, default = raw["refusals"], raw["files"], raw.get("default", "")
    if not isinstance(refusals, str) or not refusals:
        raise ConfigError(f"{where}.refusals must be a non-empty string, got {_show(refusals)}")
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise ConfigError(f"{where}.files must be a list of globs, got {_show(files)}")
    if not isinstance(default, str):
        raise ConfigError(f"{where}.default must be a string, got {_show(default)}")
    return Runner(refusals, tuple(files), default)


def validate(name: str, value: Any) -> Any:
    """The one validation of a setting's value, from any source: the value to use, or a :class:`ConfigError`
    whose one-line message names the key (kebab-case; ``extend-`` keys take their list key's kind)."""
    setting = BY_NAME.get(name.replace("-", "_").removeprefix("extend_"))
    if setting is None or (name.replace("-", "_").startswith("extend_") and not setting.extend):
        raise ConfigError(f"unknown setting {name.replace('_', '-')!r}")
    key = name.replace("_", "-")
    kind = setting.kind
    if kind == "bool":
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{key!r} must be true or false, got {_show(value)}")
    if kind in ("string", "path"):
        if isinstance(value, str):
            return value
        raise ConfigError(f"{key!r} must be a string, got {_show(value)}")
    if kind == "strings":
        strings = _strings_of(value)
        if strings is None:
            raise ConfigError(f"{key!r} must be a list of strings, got {_show(value)}")
        return strings
    if kind == "codes":
        if isinstance(value, str):
            value = [code.strip() for code in value.split(",") if code.strip()]
        codes = _strings_of(value)
        if codes is None:
            raise ConfigError(f"{key!r} must be a list of codes such as [\"SC001\"], got {_show(value)}")
        unknown = [code for code in codes if code not in DEFAULT_SEVERITY]
        if unknown:
            raise ConfigError(f"unknown diagnostic code {unknown[0]!r} in {key!r} (known: {known_codes()})")
        if key == "select" and not codes:  # a check that reports no code passes whatever it finds
            raise ConfigError(f"{key!r} names no code, so nothing would be reported; leave it out to report "
                              f"every code (known: {known_codes()})")
        return frozenset(codes)
    if kind == "severity":
        if not isinstance(value, dict):
            raise ConfigError(f"{key!r} must be a table of code = severity, got {_show(value)}")
        result = {}
        for code, level in value.items():
            if code not in DEFAULT_SEVERITY:
                raise ConfigError(f"unknown diagnostic code {code!r} in {key!r} (known: {known_codes()})")
            if not isinstance(level, str) or level.lower() not in SEVERITIES:
                raise ConfigError(f"severity of {code} must be one of {', '.join(SEVERITIES)}, not {_show(level)}")
            result[code] = Severity(level.lower())
        return result
    if kind == "receivers":
        if not isinstance(value, list):
            raise ConfigError(f"{key!r} must be a list of tables, got {_show(value)}")
        return tuple(_receiver(raw, f"{key}[{i}]") for i, raw in enumerate(value))
    if kind == "algorithms":
        if not isinstance(value, list):
            raise ConfigError(f"{key!r} must be a list of tables, got {_show(value)}")
        return tuple(_algorithm(raw, f"{key}[{i}]") for i, raw in enumerate(value))
    if kind == "runners":
        if not isinstance(value, list):
            raise ConfigError(f"{key!r} must be a list of tables, got {_show(value)}")
        return tuple(_runner(raw, f"{key}[{i}]") for i, raw in enumerate(value))
    if kind == "capabilities":
        if not isinstance(value, list):
            raise ConfigError(f"{key!r} must be a list of tables, got {_show(value)}")
        return tuple(_capability(raw, f"{key}[{i}]") for i, raw in enumerate(value))
    if kind == "milliseconds":
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= MAX_DEBOUNCE_MS:
            return int(value)
        raise ConfigError(f"{key!r} must be a number of milliseconds between 0 and {MAX_DEBOUNCE_MS}, "
                          f"got {_show(value)}")
    return value  # "client": the editor extension's own


# -- reading the sources ------------------------------------------------------------------------------------

MAX_SETTINGS_FILE_BYTES = 16 * 1024 * 1024  # a config or baseline file; far above any real one


def read_settings_file(path: Path, what: str) -> bytes:
    """The bytes of a file the tool reads besides sources (a config file, a baseline), or a one-line
    :class:`ConfigError` naming it as ``what``.

    Such a path can come from a cloned repository's pyproject, so it may name anything: a FIFO would block
    ``read`` for ever (and in the editor the engine thread with it), ``/dev/zero`` or a huge file would read
    until ``MemoryError``. Only a regular file is read, opened without blocking, and at most the limit.
    """
    data = read_bytes(str(path), MAX_SETTINGS_FILE_BYTES)
    if data == "not-a-file":
        raise ConfigError(f"{what} {path}: not a regular file")
    if isinstance(data, str):
        why = "no such file" if not os.path.lexists(path) else "cannot read it"
        raise ConfigError(f"{what} {path}: {why}")
    if len(data) > MAX_SETTINGS_FILE_BYTES:
        raise ConfigError(f"{what} {path}: larger than {MAX_SETTINGS_FILE_BYTES // (1024 * 1024)} MiB")
    return data


def _read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's table, or a one-line :class:`ConfigError` for whatever is wrong with the file."""
    data = read_settings_file(path, "config file")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None


def snake_key(key: str) -> str:
    """A setting's name as :data:`BY_NAME` keys it, from snake_case, kebab-case and camelCase alike (pyproject,
    the CLI and the editor's settings)."""
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(key)).replace("-", "_")


def _merge(base: dict[str, Any], layer: dict[str, Any], origin: str, directory: Path | None) -> dict[str, Any]:
    """``layer`` over ``base``, each value validated; ``directory`` anchors relative paths (``baseline``)."""
    merged = dict(base)
    for raw_key, raw_value in layer.items():
        key = snake_key(str(raw_key))
        try:
            value = validate(key, raw_value)
        except ConfigError as exc:
            raise ConfigError(f"{origin}: {exc}") from None
        setting = BY_NAME[key.removeprefix("extend_")]
        if setting.where == "client" or key == "debounce":
            continue
        if key.startswith("extend_"):
            target = key[len("extend_"):]
            merged[target] = tuple(merged.get(target, ())) + tuple(value)
        elif key == "severity":
            merged["severity"] = {**merged.get("severity", {}), **value}
        elif key == "baseline":
            merged["baseline"] = str(directory / value) if directory is not None else value
        else:
            merged[key] = value
    return merged


def pyproject_table(root: Path) -> tuple[dict[str, Any], str] | None:
    """``root/pyproject.toml``'s ``[tool.spec-contract]`` table and the file's name, if it has one."""
    candidate = root / "pyproject.toml"
    if not candidate.is_file():
        return None
    return _table_in(_read_toml(candidate), candidate, default=None)


def _table_in(data: dict[str, Any], path: Path, default: Any) -> Any:
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: 'tool' must be a table, got {_show(tool)}")
    table = tool.get("spec-contract", default)
    if table is None:
        return None
    if "spec-contract" in tool:  # a setting beside the table, not in it, would be silently dropped
        stray = [key for key in data if key != "tool" and snake_key(str(key)).removeprefix("extend_") in BY_NAME]
        if stray:
            key = stray[0]
            written = f"[[tool.spec-contract.{key}]]" if isinstance(data[key], list) and data[key] \
                and isinstance(data[key][0], dict) else f"{key} = … under [tool.spec-contract]"
            raise ConfigError(f"{path}: {key!r} is outside [tool.spec-contract] and would be ignored; "
                              f"write it as {written}")
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.spec-contract] must be a table, got {_show(table)}")
    return table, str(path)


def load_config(root: Path | None, config_file: Path | None = None,
                overrides: dict[str, Any] | None = None) -> Config:
    """The configuration for the project at ``root`` (None: no project file, the profile and the overrides
    alone); see the module docstring for precedence."""
    layers: list[tuple[dict[str, Any], str, Path | None]] = []
    if config_file is not None:
        data = _read_toml(config_file)
        table, origin = _table_in(data, config_file, default=data)
        layers.append((table, origin, config_file.resolve().parent))
    elif root is not None and root.is_dir():
        found = pyproject_table(root)
        if found:
            layers.append((found[0], found[1], root.resolve()))
    if overrides:
        layers.append(({k: v for k, v in overrides.items() if v is not None}, "settings", root))

    detected = detect_profile(root)
    profile_name = detected.profile if detected else DEFAULT_PROFILE
    for table, origin, _ in layers:
        for key, value in table.items():
            if snake_key(str(key)) == "profile":
                try:
                    profile_name = validate("profile", value)
                except ConfigError as exc:
                    raise ConfigError(f"{origin}: {exc}") from None
    profile = _builtin_profile(profile_name)
    merged: dict[str, Any] = _merge({}, profile, f"profile {profile_name!r}", None)
    own = merged.get("engine_package") or profile_name
    if detected is not None and detected.profile == profile_name:
        merged["engine_package"] = detected.package  # the tree's name for the engine (a fork's own)
    merged["severity"] = dict(DEFAULT_SEVERITY)
    for table, origin, directory in layers:
        merged = _merge(merged, table, origin, directory)
    # said when the tree chose something the default would not be: another profile, or a fork's package
    chosen = detected.why if detected is not None and detected.profile == profile_name and (
        profile_name != DEFAULT_PROFILE or detected.package != own) else None
    setter = next((origin for table, origin, _ in reversed(layers)
                   if any(snake_key(str(key)) == "engine_package" for key in table)), None)
    configured: str = merged.get("engine_package") or profile_name
    if setter is not None and detected is not None and detected.profile == profile_name \
            and configured != detected.package and root is not None and not holds_package(root, configured):
        # a package the tree does not have would leave every dotted class of the profile unread: the layout's is
        # the engine the tree holds, and the one line says which was set and which is used
        merged["engine_package"] = detected.package
        chosen = f"engine-package {configured!r} ({setter}) names nothing in the tree, so the layout's is used: " \
            f"{detected.why}"
    return _build(profile_name, merged, own, chosen)


def detect_profile(root: Path | None) -> Detected | None:
    """The built-in profile whose engine's layout ``root`` has (``…/site-packages/aphrodite`` is vLLM's) or
    holds at its top (a checkout), with the engine package found there and why: the profile a tree gets when
    nothing names one."""
    if root is None or not root.is_dir():
        return None
    return detect(root, _layouts())


def _build(profile_name: str, merged: dict[str, Any], own: str | None = None, chosen: str | None = None) -> Config:
    """The configuration; dotted classes written under the profile's own package (``own``) are read in the
    engine package the tree has."""
    package = merged.get("engine_package") or profile_name
    own = own or package
    capabilities = tuple(replace(c, protocol=rebased(c.protocol, own, package),
                                 holder_mixin=rebased(c.holder_mixin, own, package) if c.holder_mixin else None)
                         for c in merged.get("capabilities", ()))

    def globs(key: str) -> tuple[str, ...]:  # ``**/vllm/models/**`` is ``**/aphrodite/models/**`` in a fork
        return tuple("/".join(package if part == own else part for part in glob.split("/"))
                     for glob in merged.get(key, ()))

    return Config(
        profile=profile_name,
        engine_package=package,
        chosen=chosen,
        workers=globs("workers"),
        model_files=globs("model_files"),
        entry_class_variable=merged.get("entry_class_variable") or None,
        delegate_names=merged.get("delegate_names", ()),
        speculative_conditions=frozenset(merged.get("speculative_conditions", ())),
        ignored_members=frozenset(merged.get("ignored_members", ())),
        draft_only_classes=merged.get("draft_only_classes", ()),
        registry_candidates=tuple(rebased(c, own, package) for c in merged.get("registry_candidates", ())),
        receivers=merged.get("receivers", ()),
        algorithms=merged.get("algorithms", ()),
        algorithm_names=tuple(rebased(n, own, package) for n in merged.get("algorithm_names", ())),
        algorithm_option=merged.get("algorithm_option") or "speculative_algorithm",
        algorithm_option_files=globs("algorithm_option_files"),
        non_target_classes=merged.get("non_target_classes", ()),
        generation_test=rebased(merged["generation_test"], own, package) if merged.get("generation_test") else None,
        draft_rewrites=tuple(rebased(f, own, package) for f in merged.get("draft_rewrites", ())),
        draft_tables=merged.get("draft_tables", ()),
        draft_classes=merged.get("draft_classes", ()),
        any_draft_workers=merged.get("any_draft_workers", ()),
        off_by_default=merged.get("off_by_default", ()),
        start_up_methods=merged.get("start_up_methods", ("__init__",)),
        start_up_callers=globs("start_up_callers"),
        registry_files=globs("registry_files"),
        restrict_delegates=merged.get("restrict_delegates", False),
        registry_tables=merged.get("registry_tables", ()),
        capabilities=capabilities,
        runners=tuple(Runner(rebased(r.refusals, own, package),
                             tuple("/".join(package if part == own else part for part in glob.split("/"))
                                   for glob in r.files), rebased(r.default, own, package) if r.default else "")
                      for r in merged.get("runners", ())),
        severity={**DEFAULT_SEVERITY, **merged.get("severity", {})},
        include=merged.get("include", ()),
        exclude=tuple(dict.fromkeys(DEFAULT_EXCLUDE + merged.get("exclude", ()))),
        enable=merged.get("enable", True),
        select=merged.get("select", frozenset(DEFAULT_SEVERITY)),
        baseline=merged.get("baseline"),
    )


def with_select(config: Config, codes: list[str]) -> Config:
    """``--select`` narrows the reported codes."""
    try:
        return replace(config, select=validate("select", codes))
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("'select'", "--select")) from None
