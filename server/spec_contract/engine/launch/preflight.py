"""Will this launch work? The target and the draft, in their roles, under the launch's algorithm.

The answer costs one analysis of the engine's source (cached as ``check``'s is) and two ``config.json``
reads: the checkpoints name their architectures, the engine's registry names the classes, the algorithm
selects the part of the contract the run meets, and the start-up checks that config files decide
(:mod:`~spec_contract.engine.launch.checks`) run on the same files. Nothing is imported, loaded or fetched.

A launch that fails may fail several ways; the user meets the first only, and the next after fixing it. The
failures are put in the order a run meets them (:data:`~spec_contract.engine.launch.verdict.PHASES`): those
while the server starts, then at the first request, then every step. Within the start-up, what is known of the
engine's order is used: SGLang starts the target's worker (its weights, then its model runner's start-up)
before it builds the speculative worker, which builds the draft's worker (the draft's config checks, then its
weights) and then makes its own start-up uses. Other failures of one phase come in the order they are listed
(the launch's, the target's, the draft's) and are said to be a tie: which a run reaches first is the engine's
call order, which the status model does not follow.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from spec_contract.engine.config import ConfigError, load_config
from spec_contract.engine.launch.algorithms import Selection, select
from spec_contract.engine.launch.architectures import architectures, class_for
from spec_contract.engine.launch.checkpoint import Checkpoint, read_checkpoint
from spec_contract.engine.launch.checks import EngineLine, LaunchProblem, run_launch_checks
from spec_contract.engine.launch.command import Launch, LaunchError
from spec_contract.engine.launch.release import release
from spec_contract.engine.launch.verdict import ORDER, PHASES, State, Verdict, class_facts, phase_words, verdict
from spec_contract.engine.project import Project
from spec_contract.engine.queries import Analysis
from spec_contract.engine.read.environment import locate_engine
from spec_contract.engine.read.files import glob_match, read_text
from spec_contract.engine.read.given import given_path
from spec_contract.engine.resolve.index import ClassKey
from spec_contract.engine.results import Phase, Role
from spec_contract.engine.text import split_lines

_FAILING = (State.CRASHES, State.REFUSED)

# worker files whose start-up uses on the target run in the target's own worker, which the engine starts (and
# loads) before it builds the speculative worker and the draft's worker in it (see the module docstring)
_TARGET_STARTS_FIRST = {"sglang": ("**/model_executor/**", "**/managers/tp_worker.py")}


@dataclass(frozen=True)
class Engine:
    """The engine source a preflight reads: its package directory (or a project holding it), the profile that
    reads it (None: as the tree's layout and ``[tool.spec-contract]`` say), and the interpreter whose installed
    engine a tree without workers (a package of one's own models) takes its contract from."""

    profile: str | None
    root: Path
    python: str | None = None


def find_engine(profile: str | None, engine: str | None, python: str | None) -> Engine:
    """The engine tree: ``engine`` (a directory), else the package installed for ``python`` (default: this
    interpreter), read as source."""
    if engine is not None:
        root = given_path(engine, "--engine")
        if not root.is_dir():
            raise ConfigError(f"--engine {engine}: no such directory")
        return Engine(profile, root.resolve(), python)
    config = load_config(None, None, {"profile": profile or "sglang"})
    found = locate_engine(python, config.engine_package)
    if found is None:
        where = f"--python {python}" if python else "this interpreter"
        raise ConfigError(f"{config.engine_package} is not installed for {where}; pass --python PATH (the server's "
                          f"interpreter) or --engine DIR (its source tree)")
    return Engine(config.profile, found)


def analyse_engine(engine: Engine, use_cache: bool = True) -> Analysis:
    config = load_config(engine.root, None, {"profile": engine.profile} if engine.profile else None)
    return Project(engine.root, config, python=engine.python, use_cache=use_cache).analyze()


@dataclass(frozen=True)
class Failure:
    """One way the launch fails: the launch refused by a check of its config files, or the target or the draft
    refused or crashing; and when, as a phase (one of :data:`~spec_contract.engine.launch.verdict.PHASES`) and
    in words. ``step`` orders the failures of one phase that the engine's start-up order tells apart (equal:
    a tie, see the module docstring)."""

    phase: str
    when: str
    who: str  # "launch", "target" or "draft"
    state: State  # refused or crashes
    what: str  # the check, the member, or the algorithm (a gate no member names)
    path: str  # the engine line it happens at, relative to the engine's root ("" when none is known)
    line: int
    step: int = 0


@dataclass(frozen=True)
class Preflight:
    """The verdicts of the launch's target (and draft), the start-up refusals the launch checks found, and
    notes (checks skipped, conditions)."""

    engine: Engine
    algorithm: str | None
    target: Checkpoint
    draft: Checkpoint | None
    verdicts: tuple[Verdict, ...]
    launch_problems: tuple[LaunchProblem, ...] = ()
    notes: tuple[str, ...] = ()
    incomplete: bool = False  # the engine's source could not all be read: no all-clear can be given
    version: str | None = None  # the engine's release, read from its tree
    failures: tuple[Failure, ...] = ()  # every refusal and crash, in the order a run meets them
    # for a draft the algorithm never loads: the verdicts, as its draft, of the classes its config loads instead
    instead: tuple[Verdict, ...] = ()

    @property
    def first_failures(self) -> tuple[Failure, ...]:
        """The failure the user meets first, or the tie of those (see the module docstring)."""
        first = self.failures[0] if self.failures else None
        return tuple(f for f in self.failures if (f.phase, f.step) == (first.phase, first.step)) if first else ()

    @property
    def state(self) -> State:
        states = [v.state for v in self.verdicts] + [State.REFUSED for _ in self.launch_problems]
        states += [State.UNKNOWN] if self.incomplete else []
        states += [loaded] if (loaded := self.instead_state) is not None else []
        return min(states, key=ORDER.index, default=State.SUPPORTED)

    @property
    def instead_state(self) -> State | None:
        """What the classes loaded instead of the draft say of the launch: the worst of them when every one
        fails or none does, cannot tell when only some do (which one the engine loads depends on the checkpoint);
        None without any."""
        failing = [v.state for v in self.instead if v.state in _FAILING]
        if not failing:  # one that cannot be told, or degrades, is what the launch may meet
            return min((v.state for v in self.instead), key=ORDER.index, default=None)
        return min(failing, key=ORDER.index) if len(failing) == len(self.instead) else State.UNKNOWN

    @property
    def exit_code(self) -> int:
        """0: nothing is known to fail; 1: it will fail; 2: it cannot be told."""
        return {State.CRASHES: 1, State.REFUSED: 1, State.UNKNOWN: 2}.get(self.state, 0)


def preflight(launch: Launch, engine: Engine, analysis: Analysis, env: dict[str, str]) -> Preflight:
    """The launch's verdicts from the engine's ``analysis``; ``env`` is the environment the server will see."""
    if launch.algorithm is None and launch.draft is not None:
        raise LaunchError("the launch names a draft model but no speculative algorithm "
                          "(--speculative-algorithm NAME, or \"method\" in --speculative-config)")
    target = read_checkpoint(launch.model, env)
    draft = read_checkpoint(launch.draft, env) if launch.draft is not None else None
    version = release(Path(analysis.root), analysis.config.engine_package)
    if launch.algorithm is None:
        return Preflight(engine, None, target, draft, (), notes=("no speculative algorithm: nothing of the "
                                                                  "speculative contract is used",), version=version)
    selection = select(analysis.contract, launch.engine, launch.algorithm)
    if selection.algorithm is None:  # the engine refuses the name itself, before anything loads
        refusal = (_unknown_algorithm(analysis, selection),)
        return Preflight(engine, selection.name, target, draft, (), refusal, analysis.notes, version=version,
                         failures=_failures(launch.engine, [], refusal))
    unchecked: dict[str, str] = {}
    known = architectures(analysis, unchecked)
    verdicts = [_verdict(analysis, known, unchecked, target, Role.TARGET, selection)]
    if draft is not None:
        verdicts.append(_verdict(analysis, known, unchecked, draft, Role.DRAFT, selection))
    instead, unknown = _loaded_instead(analysis, known, verdicts[-1], selection)
    checks = run_launch_checks(launch.engine, engine.root, target, draft, launch.context_length, env)
    unread = [f"could not read {analysis.relative(path)}: {why}" for path, why in sorted(analysis.unread.items())]
    notes = analysis.notes + tuple(n for v in verdicts for n in v.notes) + checks.notes + tuple(unread) + unknown
    result = Preflight(engine, selection.name, target, draft, tuple(verdicts), checks.problems, notes, bool(unread),
                       version, instead=instead)
    # the classes loaded instead fail the launch only when every one does: their failures are its own then
    failing = verdicts + list(instead) if result.instead_state in (State.CRASHES, State.REFUSED) else verdicts
    return replace(result, failures=_failures(launch.engine, failing, checks.problems))


def _loaded_instead(analysis: Analysis, known: dict[str, ClassKey], draft: Verdict,
                    selection: Selection) -> tuple[tuple[Verdict, ...], tuple[str, ...]]:
    """For a draft the algorithm never loads (its config rewrites the draft's architecture, see
    ``resolve.algorithm_drafts``), the verdicts of the classes it may load instead, in the draft's role, and a note
    naming those this release does not register (nothing to check them by)."""
    if draft.role is not Role.DRAFT or draft.state is not State.NOT_ITS_DRAFT:
        return (), ()
    release = analysis.contract.release
    loaded = next((names for name, names, _ in (release.drafts if release else ()) if name == selection.algorithm), ())
    verdicts = tuple(verdict(analysis, arch, class_facts(analysis, known[arch]), Role.DRAFT, selection)
                     for arch in loaded if arch in known)
    missing = [arch for arch in loaded if arch not in known]
    return verdicts, (f"the engine's config may load {', '.join(missing)} instead, which this release does not "
                      "register: not checked",) if missing else ()


def _failures(engine: str, verdicts: list[Verdict], refusals: tuple[LaunchProblem, ...]) -> tuple[Failure, ...]:
    """Every refusal and crash of the launch, in the order a run meets them (see the module docstring)."""
    start_up = str(Phase.START_UP)
    first = _TARGET_STARTS_FIRST.get(engine, ())
    out = [Failure(start_up, p.when, "launch", State.REFUSED, p.check, p.where.path, p.where.line, 1) for p in refusals]
    for v in verdicts:
        for p in v.problems:
            if p.state not in (State.REFUSED, State.CRASHES):
                continue
            use = p.uses[0] if p.uses else None
            phase = use.phase if use is not None and use.phase in PHASES else start_up
            own = phase == start_up and v.role is Role.TARGET and use is not None and glob_match(use.path, first)
            when = "while the target's worker starts, after the target's weights load" if own else phase_words(phase)
            out.append(Failure(phase, when, str(v.role), p.state, p.member or v.algorithm, use.path if use else "",
                               use.line if use else 0, 0 if own or phase != start_up else 2))
    return tuple(sorted(out, key=lambda f: (PHASES.index(f.phase), f.step)))


def _unknown_algorithm(analysis: Analysis, selection: Selection) -> LaunchProblem:
    """The engine's refusal of an algorithm the release does not have: where it reads the name, what it takes."""
    valid = ", ".join(selection.valid)
    where = EngineLine("", 0, "")
    if selection.refused is not None:
        path, line = selection.refused
        lines = split_lines(read_text(Path(path))) if Path(path).is_file() else []
        where = EngineLine(analysis.relative(path), line + 1, lines[line].strip() if line < len(lines) else "")
    return LaunchProblem("algorithm", f"this release has no speculative algorithm {selection.name}; it refuses the "
                                      f"launch before loading anything (it takes {valid})", where,
                         f"use one of {valid}, or the release that has {selection.name}")


def _verdict(analysis: Analysis, known: dict[str, ClassKey], unchecked: dict[str, str], checkpoint: Checkpoint,
             role: Role, selection: Selection) -> Verdict:
    arch, key = class_for(known, checkpoint.architectures, checkpoint.path, unchecked)
    return verdict(analysis, arch, class_facts(analysis, key), role, selection)
