"""Will this launch work? The target and the draft, in their roles, under the launch's algorithm.

The answer costs one analysis of the engine's source (cached as ``check``'s is) and two ``config.json``
reads: the checkpoints name their architectures, the engine's registry names the classes, the algorithm
selects the part of the contract the run meets, and the start-up checks that config files decide
(:mod:`~spec_contract.engine.launch.checks`) run on the same files. Nothing is imported, loaded or fetched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from spec_contract.engine.config import ConfigError, load_config
from spec_contract.engine.launch.algorithms import Selection, select
from spec_contract.engine.launch.architectures import architectures, class_for
from spec_contract.engine.launch.checkpoint import Checkpoint, read_checkpoint
from spec_contract.engine.launch.checks import LaunchProblem, run_launch_checks
from spec_contract.engine.launch.command import Launch, LaunchError
from spec_contract.engine.launch.verdict import ORDER, State, Verdict, class_facts, verdict
from spec_contract.engine.project import Project
from spec_contract.engine.queries import Analysis
from spec_contract.engine.read.environment import locate_engine
from spec_contract.engine.read.files import read_text
from spec_contract.engine.resolve.index import ClassKey
from spec_contract.engine.results import Role


@dataclass(frozen=True)
class Engine:
    """The engine source a preflight reads: its package directory (or a project holding it), the profile that
    reads it (None: as the tree's layout and ``[tool.spec-contract]`` say), and the interpreter whose installed
    engine a tree without workers (a package of one's own models) takes its contract from."""

    profile: str | None
    root: Path
    python: str | None = None

    @property
    def version(self) -> str | None:
        """The release, from the installed distribution's ``.dist-info`` beside the package, else the
        ``_version.py`` a wheel build writes (read as text)."""
        for info in sorted(self.root.parent.glob(f"{self.root.name}-*.dist-info")):
            return info.name[len(self.root.name) + 1:-len(".dist-info")]
        try:
            text = read_text(self.root / "_version.py")
        except (OSError, UnicodeDecodeError):
            return None
        found = re.search(r"^__version__\s*=\s*(?:version\s*=\s*)?['\"]([^'\"]+)['\"]", text, re.M)
        return found.group(1) if found else None


def find_engine(profile: str | None, engine: str | None, python: str | None) -> Engine:
    """The engine tree: ``engine`` (a directory), else the package installed for ``python`` (default: this
    interpreter), read as source."""
    if engine is not None:
        root = Path(engine).expanduser()
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

    @property
    def state(self) -> State:
        states = [v.state for v in self.verdicts] + [State.REFUSED for _ in self.launch_problems]
        states += [State.UNKNOWN] if self.incomplete else []
        return min(states, key=ORDER.index, default=State.SUPPORTED)

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
    if launch.algorithm is None:
        return Preflight(engine, None, target, draft, (), notes=("no speculative algorithm: nothing of the "
                                                                  "speculative contract is used",))
    selection = select(analysis.config, launch.engine, launch.algorithm)
    unchecked: dict[str, str] = {}
    known = architectures(analysis, unchecked)
    verdicts = [_verdict(analysis, known, unchecked, target, Role.TARGET, selection)]
    if draft is not None:
        verdicts.append(_verdict(analysis, known, unchecked, draft, Role.DRAFT, selection))
    checks = run_launch_checks(launch.engine, engine.root, target, draft, launch.context_length, env)
    unread = [f"could not read {analysis.relative(path)}: {why}" for path, why in sorted(analysis.unread.items())]
    notes = analysis.notes + tuple(n for v in verdicts for n in v.notes) + checks.notes + tuple(unread)
    return Preflight(engine, selection.name, target, draft, tuple(verdicts), checks.problems, notes, bool(unread))


def _verdict(analysis: Analysis, known: dict[str, ClassKey], unchecked: dict[str, str], checkpoint: Checkpoint,
             role: Role, selection: Selection) -> Verdict:
    arch, key = class_for(known, checkpoint.architectures, checkpoint.path, unchecked)
    return verdict(analysis, arch, class_facts(analysis, key), role, selection)
