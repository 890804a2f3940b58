"""The ``spec-contract`` command: ``check`` and ``contract`` for terminals and CI, ``serve`` for editors.

This module only translates: arguments → :class:`~spec_contract.engine.Project`, analysis →
a report format, findings → exit code (0: no error-level finding, 1: findings, 2: usage or configuration
error, always with a one-line message).
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import gc
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from spec_contract import __version__
from spec_contract.arguments import OneLineParser

if TYPE_CHECKING:
    from spec_contract.engine import Analysis, Baseline, BaselineEntry, Found, Launch, Project
    from spec_contract.fixing import Outcome
    from spec_contract.report import Report

# The engine and the reports are imported where they are used: ``spec-contract serve`` must start as fast
# as a bare pygls server, and the language server loads the engine on its own thread when it needs it.


def _codes(text: str) -> list[str]:
    """``--select``'s codes, in any case (``sc001`` is SC001)."""
    return [code.strip().upper() for code in text.split(",") if code.strip()]




DESCRIPTION = """Keep model wrapper classes in step with the speculative-decoding workers that call them:
'check' and 'contract' for terminals and CI, 'serve' for editors."""
EXIT_CODES = """exit codes:
  0  no error-level finding (warnings and information do not fail a run)
  1  error-level findings, or a fix that was asked for and not made
  2  usage or configuration error, or a path the check needed could not be read (one line on stderr)"""

EXAMPLES = """examples:
  spec-contract check
      check the project around the current directory; exit 1 if a wrapper would crash a run
  spec-contract check python/sglang/srt/models/kimi_vl.py --diff
      show the forwards that fix the file's error findings, without writing them (--fix writes them)
  spec-contract check --format github --select sc001,sc003
      in a GitHub Actions step: annotate the pull request with those two codes' findings"""


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="spec-contract", description=DESCRIPTION, epilog=f"{EXIT_CODES}\n\n{EXAMPLES}",
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"spec-contract {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    from spec_contract.engine import DISCOVERY_RULE

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("paths", nargs="*", metavar="PATH",
                       help="files or folders anywhere inside a project, project roots or installed package "
                            "directories (default: .)")
        p.add_argument("--profile", help="engine profile (default: sglang, or the pyproject's)")
        p.add_argument("--config", type=Path, help="a TOML file with the [tool.spec-contract] settings to use")
        p.add_argument("--no-cache", action="store_true", help="do not read or write the summary cache")
        p.add_argument("--python", help="interpreter whose installed engine supplies the contract for out-of-tree models")

    check = sub.add_parser("check", help="report wrapper classes that do not forward contract methods",
                           description=f"Report wrapper classes that do not forward contract methods. {DISCOVERY_RULE}",
                           epilog=f"{EXIT_CODES}\n\n{EXAMPLES}", formatter_class=argparse.RawDescriptionHelpFormatter)
    common(check)
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text",
                       help="text: findings for a terminal (default); json: the documented schema, for tools; "
                            "sarif: SARIF 2.1.0, for code scanning; github: annotations and a step summary, for "
                            "GitHub Actions")
    check.add_argument("--fix", action="store_true",
                       help="add the missing members that make the check fail (error-level findings) to the given "
                            "files; with --select, those of the selected codes whatever their severity")
    check.add_argument("--diff", action="store_true", help="show what --fix would change, as a unified diff, and "
                                                           "write nothing")
    check.add_argument("--select", help="comma-separated codes to report, any case (default: all)")
    check.add_argument("--hints", action="store_true",
                       help="text output: show hints too (classes that could support an algorithm the engine "
                            "refuses them; JSON always has them)")
    check.add_argument("--statistics", action="store_true", help="count the findings per code, errors first, instead "
                                                                 "of listing them (text format)")
    check.add_argument("--quiet", action="store_true", help="text output: show the errors only (the summary counts the "
                                                            "rest); the exit status is the same")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help="colour the text output: auto (default) on a terminal, unless NO_COLOR is set or "
                            "FORCE_COLOR asks for it")
    baseline = check.add_mutually_exclusive_group()
    baseline.add_argument("--baseline", type=Path, metavar="FILE",
                          help="fail only on findings not in FILE (default: the pyproject's 'baseline' key)")
    baseline.add_argument("--write-baseline", type=Path, metavar="FILE",
                          help="record the findings in FILE (sorted, one per line) and exit 0")
    contract = sub.add_parser("contract", help="print the contract derived from the workers",
                              description=f"Print the contract derived from the workers. {DISCOVERY_RULE}")
    common(contract)
    contract.add_argument("--format", choices=("text", "json"), default="text")
    sub.add_parser("serve", help="run the language server: stdio by default (--stdio is accepted), or --tcp/--ws "
                                 "with --host and --port")
    _launch_parsers(sub)
    return parser


def _launch_parsers(sub: argparse._SubParsersAction) -> None:
    """``preflight`` and ``matrix``: before the launch, from the engine's source and the checkpoints' configs."""
    def engine(p: argparse.ArgumentParser) -> None:
        p.add_argument("--python", help="the server's interpreter: its installed engine is read as source "
                                        "(default: this interpreter)")
        p.add_argument("--engine", metavar="DIR", help="the engine's source tree to read instead (its package folder or "
                                                        "a checkout); a package of your own models takes the "
                                                        "contract from --python's engine")
        p.add_argument("--no-cache", action="store_true", help="do not read or write the summary cache")

    pre = sub.add_parser("preflight", help="will this launch work? the launch's target and draft classes under its "
                                           "algorithm, before any weight loads",
                         description="Check a launch before running it: `spec-contract preflight -- python -m "
                                     "sglang.launch_server --model-path DIR --speculative-algorithm EAGLE3 "
                                     "--speculative-draft-model-path DIR`, or the same as --model/--algorithm/--draft. "
                                     "Exit 0: nothing is known to fail; 1: it will fail; 2: it cannot tell.")
    engine(pre)
    pre.add_argument("--model", help="the target checkpoint: a directory, or a hub id in the Hugging Face cache")
    pre.add_argument("--algorithm", help="the speculative algorithm (EAGLE3, DFLASH, …)")
    pre.add_argument("--draft", help="the draft checkpoint: a directory, or a hub id in the cache")
    pre.add_argument("--profile", choices=("sglang", "vllm"), default=None,
                     help="the engine of --model (default: as --engine's tree says, else sglang; a launch line "
                          "says its own)")
    pre.add_argument("--format", choices=("text", "json"), default="text")
    pre.add_argument("launch", nargs=argparse.REMAINDER, help="-- then the launch command")
    matrix = sub.add_parser("matrix", help="every registered architecture × every algorithm: supported, refused, "
                                           "crashes or degraded",
                            description="The support matrix of the engine at PATH (as check finds the project "
                                        "around it), --engine DIR, or installed for --python.")
    matrix.add_argument("path", nargs="?", metavar="PATH",
                        help="the engine's tree, or any file or folder inside it (the project around it, found as "
                             "check finds it); default: --engine, else the engine installed for --python")
    engine(matrix)
    matrix.add_argument("--profile", choices=("sglang", "vllm"), default=None,
                        help="the engine's profile (default: as the tree says, else sglang)")
    matrix.add_argument("--format", choices=("table", "markdown", "json", "html"), default="table")
    matrix.add_argument("--output", "-o", type=Path, metavar="FILE", help="write to FILE instead of standard output")


@dataclass
class _Target:
    """One discovered project and the PATHs given inside it: the project is analysed whole, and only the
    classes defined in those paths are reported (and fixed)."""

    project: Project
    found: Found
    paths: list[Path]

    @property
    def whole(self) -> bool:
        return any(path == self.found.root for path in self.paths)

    def covers(self, path: str) -> bool:
        return self.whole or any(path == str(p) or path.startswith(str(p) + os.sep) for p in self.paths)


def _resolved(given: str) -> Path:
    """A PATH argument, resolved, or a one-line ConfigError (exit 2) saying why there is none: missing, a
    symlink loop (``pathlib`` raises a RuntimeError with a traceback's worth of frames), a component that is
    a file, no permission, a name too long or holding a NUL byte."""
    from spec_contract.engine import ConfigError

    try:
        return Path(os.path.realpath(given, strict=True))
    except FileNotFoundError:
        raise ConfigError(f"{given}: no such file or directory") from None
    except OSError as exc:
        why = "a symlink loop" if exc.errno == errno.ELOOP else exc.strerror or type(exc).__name__
        raise ConfigError(f"{given}: {why}") from None
    except ValueError as exc:  # an embedded NUL byte
        raise ConfigError(f"{given!r}: not a usable path ({exc})") from None


def _projects(args: argparse.Namespace) -> list[_Target]:
    """Each PATH's project (``engine.discovery``), several PATHs of one project sharing it."""
    from spec_contract.engine import (
        ConfigError,
        Found,
        Listings,
        Project,
        find_project,
        given_path,
        load_config,
        nested_projects,
        with_select,
    )

    if args.config is not None:
        args.config = given_path(str(args.config), "--config")
        if not args.config.is_file():
            raise ConfigError(f"{args.config}: {'not a regular file' if os.path.lexists(args.config) else 'no such config file'}")
    overrides = {"profile": args.profile} if args.profile else None
    profile = None  # the profile's worker globs, for discovery's second step; read once, when first needed
    targets: dict[Path, _Target] = {}
    listings = Listings()  # each folder listed once, for discovery and the projects' first walks
    # Each PATH's project, then the projects of their own below a folder PATH (a vendored copy with its own
    # [tool.spec-contract]): the project around one leaves its tree out, so each is checked once, as itself
    queue: list[tuple[Path, Found | None]] = [(_resolved(given), None) for given in args.paths or ["."]]
    while queue:
        path, found = queue.pop(0)
        if profile is None:
            profile = load_config(None, args.config, overrides)
        if found is None:
            found = find_project(path, profile.workers, profile.exclude, listings)
            if path.is_dir():
                queue += [(inner, Found(inner, "pyproject"))
                          for inner in nested_projects(path, profile.exclude, listings)]
        target = targets.get(found.root)
        if target is None:
            config = load_config(found.root, args.config, overrides)
            if getattr(args, "select", None) is not None:  # `--select ""` too: it would report nothing
                config = with_select(config, _codes(args.select))
            project = Project(found.root, config, python=args.python, use_cache=not args.no_cache,
                              listings=listings)
            target = targets[found.root] = _Target(project, found, [])
        target.paths.append(path)
    return list(targets.values())


def entry() -> None:
    """The ``spec-contract`` command: :func:`main`, then, for a check, an immediate exit.

    A check leaves a large heap of summaries behind, and a normal interpreter exit frees it object by
    object after a last full collection: 0.2 s on SGLang's tree. Nothing is left to do (output is flushed
    here; cache entries were written, atomically, before ``main`` returned), so the process ends at once,
    as mypy's command does. The language server exits the normal way.
    """
    code = main()
    if sys.argv[1:2] == ["serve"]:
        raise SystemExit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # `spec-contract check | head`: the reader left
        pass
    os._exit(code)


def _emit(text: str) -> None:
    """Print ``text`` and flush it. A reader that leaves early (``spec-contract contract | head``) is fine:
    the rest of the output, and every later flush (the interpreter's own at exit included), goes to
    ``/dev/null`` instead of ending the run with a ``BrokenPipeError`` traceback."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _error(text: str) -> None:
    """A one-line error on standard error, shown as the notes are: the text may hold what a checked tree or a
    checkpoint's config chose (an architecture's name, a path with a line break or an escape sequence)."""
    from spec_contract.report import printable

    print(f"spec-contract: error: {printable(text)}", file=sys.stderr)


def _run_notes(report: Report) -> bool:
    """Print what the analyses say about the run as a whole (standard error: the output stays parsable);
    returns whether a path the check needed could not be read.

    Such a run cannot vouch for the tree, so it exits 2, the way a configuration error does, whatever it
    found: an all-clear from a check that skipped an unreadable ``models/`` would be false.
    """
    from spec_contract.report import printable

    for analysis in report.analyses:
        for note in analysis.notes:
            print(f"spec-contract: warning: {printable(note)}", file=sys.stderr)
    unread = sum(len(a.unread) for a in report.analyses)
    if unread:
        print(f"spec-contract: error: {unread} path(s) the check needed could not be read; the check is incomplete",
              file=sys.stderr)
    return bool(unread)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:  # before argparse: its REMAINDER would not take `--stdio`, `--tcp`, …
        from spec_contract.lsp.server import main as serve

        return serve(argv[1:])
    parser = _parser()
    if not argv:  # a bare call: what the command does and how to call it, not only an error
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if getattr(args, "statistics", False) and args.format != "text":
        parser.error("--statistics counts findings in the text format; the other formats list every finding")
    if getattr(args, "quiet", False) and args.format != "text":
        parser.error("--quiet leaves out all but the errors in the text format; the other formats list every finding")
    # One run, then exit: pausing the cyclic collector for all of it also spares analyze() the collection
    # and freeze it does for a long-lived server (a fifth of a second on a large tree).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _launch_command(args) if args.command in ("preflight", "matrix") else _run(args)
    finally:
        if collecting:
            gc.enable()


def _launch_command(args: argparse.Namespace) -> int:
    """``preflight`` (exit 0/1/2 from its verdict) and ``matrix`` (exit 0); any bad input is one line, exit 2."""
    from spec_contract.engine import ConfigError, analyse_engine, find_engine

    try:
        launch = _launch_of(args) if args.command == "preflight" else None
        tree = args.engine if launch is not None else _matrix_tree(args)
        engine = find_engine(launch.engine if launch else args.profile, tree, args.python)
        analysis = analyse_engine(engine, use_cache=not args.no_cache)
        if launch is None:
            return _matrix(args, analysis)
        from spec_contract.engine import preflight

        result = preflight(launch, engine, analysis, launch.environment())
    except ConfigError as exc:
        _error(str(exc))
        return 2
    from spec_contract.report import preflight as report

    _emit(report.render_json(result) if args.format == "json" else report.render_text(result))
    return result.exit_code


def _launch_of(args: argparse.Namespace) -> Launch:
    from spec_contract.engine import Launch, LaunchError, parse_launch

    words = args.launch[1:] if args.launch[:1] == ["--"] else args.launch
    if words and (args.model or args.algorithm or args.draft):
        raise LaunchError("pass either a launch command after `--` or --model/--algorithm/--draft, not both")
    if words:
        return parse_launch(words)
    if not args.model:
        raise LaunchError("nothing to check: pass `-- <launch command>` or --model PATH --algorithm NAME")
    return Launch(args.profile or _tree_profile(args.engine) or "sglang", args.model, args.algorithm, args.draft)


def _tree_profile(engine: str | None) -> str | None:
    """The profile the tree of --engine says it is (a vLLM tree is vLLM's without --profile), as matrix reads it."""
    from spec_contract.engine import detect_profile

    try:
        detected = detect_profile(Path(engine)) if engine else None
    except (OSError, ValueError):  # a path no file can have: find_engine says so, in one line
        return None
    return detected.profile if detected is not None else None


def _matrix_tree(args: argparse.Namespace) -> str | None:
    """The engine tree ``matrix`` reads: the project around its PATH (found as ``check`` finds it), else
    ``--engine`` (None: the engine installed for ``--python``)."""
    if args.path is None:
        return args.engine
    if args.engine is not None:
        from spec_contract.engine import ConfigError

        raise ConfigError("pass the engine's tree as PATH or as --engine DIR, not both")
    from spec_contract.engine import find_project, load_config

    profile = load_config(None, None, {"profile": args.profile} if args.profile else None)
    return str(find_project(_resolved(args.path), profile.workers, profile.exclude).root)


def _matrix(args: argparse.Namespace, analysis: Analysis) -> int:
    from spec_contract.engine import ConfigError, support_matrix, write_own
    from spec_contract.report import matrix as report
    from spec_contract.report import printable
    from spec_contract.report.matrix_html import render_html

    table = support_matrix(analysis)
    for note in analysis.notes:
        print(f"spec-contract: warning: {printable(note)}", file=sys.stderr)
    if analysis.unread:  # as check: a matrix that skipped files it needed vouches for nothing
        print(f"spec-contract: error: {len(analysis.unread)} path(s) the matrix needed could not be read; it is "
              "incomplete", file=sys.stderr)
    text = {"table": report.render_table, "markdown": report.render_markdown, "json": report.render_json,
            "html": render_html}[args.format](table)
    done = 2 if analysis.unread else 0
    if args.output is None:
        _emit(text)
        return done
    try:  # only a matrix this command wrote is replaced (see engine.written)
        write_own(args.output, text + "\n", "support matrix", report.written_by_matrix)
    except ConfigError as exc:
        _error(str(exc))
        return 2
    print(f"Wrote the support matrix ({len(table.rows)} architectures) to {args.output}.", file=sys.stderr)
    return done


def _run(args: argparse.Namespace) -> int:
    from spec_contract.engine import ConfigError
    from spec_contract.progress import Progress

    started = time.perf_counter()
    notes: list[str] = []  # for standard error, after the output: which project each PATH was checked in, and why
    try:
        with Progress(sys.stderr, "analysing"):
            report, outcome, kept, vacant = _analyse(args, started, notes)
    except ConfigError as exc:
        _error(str(exc))
        return 2
    for note in notes:
        print(f"spec-contract: {note}", file=sys.stderr)
    incomplete = _run_notes(report)
    # an unreadable path already says why nothing may have been checked (and is the last word on stderr)
    if vacant and not incomplete:
        print("spec-contract: error: the configuration left no class to check (see above); the check vouches "
              "for nothing", file=sys.stderr)
        incomplete = True
    if args.command == "contract":
        from spec_contract.report.machine import render_json_contract
        from spec_contract.report.text import render_contract

        _emit(render_json_contract(report) if args.format == "json" else render_contract(report))
        return 2 if incomplete else 0
    if args.write_baseline is not None:
        also = f" (and kept {kept} entries this run did not check)" if kept else ""
        print(f"Wrote {len(report.findings)} finding(s) to the baseline {args.write_baseline}{also}.")
        return 0
    from spec_contract.engine import Severity
    from spec_contract.report import machine

    failing = any(f.severity == Severity.ERROR and not report.is_baselined(f) for f in report.findings)
    if outcome is not None:
        from spec_contract.fixing import summary

        if args.diff:  # the diff alone on standard output, for `patch -p0`; what it adds on standard error
            if outcome.diff:
                _emit("".join(outcome.diff).rstrip("\n"))
            for line in [*outcome.lines, summary(outcome, write=False)]:
                print(line, file=sys.stderr)
            return 2 if incomplete else 1 if outcome.refused or failing else 0
        stream = sys.stdout if args.format == "text" else sys.stderr  # machine output stays parsable
        for line in [*outcome.lines, summary(outcome, write=True)]:
            print(line, file=stream)
    if args.format == "text":
        from spec_contract.report import text  # only here: the machine formats do without its 2 ms import
        from spec_contract.report.style import Style, wants_colour

        output = text.render(report, statistics=args.statistics, width=_width(), quiet=args.quiet,
                             style=Style(wants_colour(args.color, sys.stdout)))
    elif args.format == "github":
        output = _github(report)
    else:
        output = {"json": machine.render_json, "sarif": machine.render_sarif}[args.format](report)
    if output:
        _emit(output)
    if incomplete:
        return 2
    if outcome is not None and outcome.refused:  # whatever the findings' severities: the fix asked for was not made
        return 1
    return 1 if failing else 0


def _github(report: Report) -> str:
    """``--format github``: annotations with paths from the repository root (``GITHUB_WORKSPACE``, else the
    git root above the working directory, else the working directory), and, when the runner gives a
    ``GITHUB_STEP_SUMMARY`` file, every finding as a table appended to it."""
    from spec_contract.engine import relative_to
    from spec_contract.report import machine

    workspace = os.environ.get("GITHUB_WORKSPACE")
    base = Path(workspace).resolve() if workspace else _git_root(Path.cwd()) or Path.cwd()

    def where(path: str) -> str:
        return relative_to(path, base)

    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    summarised = False
    if summary:
        try:
            with open(summary, "a", encoding="utf-8", errors="backslashreplace") as handle:
                handle.write(machine.github_summary(report, where))
            summarised = True
        except OSError as exc:
            print(f"spec-contract: warning: cannot write the step summary {summary}: {exc.strerror or exc}",
                  file=sys.stderr)
    return machine.render_github(report, where, summarised)


def _git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder, or a file in a worktree)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _width() -> int:
    """The columns a text report keeps to: the terminal's (within reason) when one shows it, else the report's
    default, so a file or a log gets the same lines on every machine."""
    from spec_contract.report.text import WIDTH

    if not sys.stdout.isatty():
        return WIDTH
    import shutil

    return max(80, min(WIDTH, shutil.get_terminal_size().columns))


def _fix(args: argparse.Namespace, targets: list[_Target]) -> Outcome:
    """``--fix`` / ``--diff`` on each target's PATHs: the error findings the baseline does not cover, and the
    findings of the codes ``--select`` names."""
    from spec_contract import fixing
    from spec_contract.engine import fingerprint
    from spec_contract.report import Report

    subsets = [_Subset(t) for t in targets]
    baselined, _ = _baseline(args, targets, tuple(s.analyze() for s in subsets))
    asked = frozenset(_codes(args.select)) if args.select else frozenset()
    return fixing.run(subsets, asked, lambda f: fingerprint(f) in baselined,
                      lambda analysis: Report((analysis,), 0.0, cwd=Path.cwd()), write=not args.diff)


def _analyse(args: argparse.Namespace, started: float, notes: list[str]
             ) -> tuple[Report, Outcome | None, int, bool]:
    """The run's work, before anything is printed: each PATH's project, ``--fix``/``--diff``, the analyses
    and the baseline (a ``--write-baseline`` run writes it: the count is the entries it kept); and whether
    a check has nothing to vouch for (some project was analysed, and none checked a class)."""
    from spec_contract.report import Report

    kept = 0
    targets = _projects(args)
    if args.command == "check":
        for target in targets:
            if not target.project.config.enable:
                notes.append(f"skipped {target.found.root}: enable = false in its [tool.spec-contract]")
        targets = [t for t in targets if t.project.config.enable]
    for target in targets:
        config = target.project.config
        if config.chosen:
            notes.append(f"profile {config.profile!r}, engine package {config.engine_package!r}: {config.chosen}")
        if not target.whole:
            notes.append(f"project {target.found.describe()}")
    outcome = _fix(args, targets) if args.command == "check" and (args.fix or args.diff) else None
    subsets = [_Subset(t) for t in targets]
    analyses = tuple(subset.report(notes) for subset in subsets)
    baselined, stale = _baseline(args, targets, analyses)
    report = Report(analyses, time.perf_counter() - started, cwd=Path.cwd(), baselined=baselined, stale=stale,
                    hints=getattr(args, "hints", False))
    if getattr(args, "write_baseline", None) is not None:
        from spec_contract.engine import write_baseline

        kept = write_baseline(args.write_baseline, report.findings, report.rel, _checked(targets))
    vacant = args.command == "check" and bool(subsets) and not any(subset.checked_any for subset in subsets)
    return report, outcome, kept, vacant


class _Subset:
    """A target's project seen through its PATHs: the analysis of the whole project with only the findings
    of the classes defined in the given paths, for the report and for ``--fix`` (which then edits only the
    given files)."""

    def __init__(self, target: _Target) -> None:
        self.target = target
        self.checked_any = False  # whether the project's analysis checked a class at all (see report)

    def analyze(self) -> Analysis:
        from spec_contract.engine import in_files

        analysis = self.target.project.analyze()
        if self.target.whole:
            return analysis
        return dataclasses.replace(analysis, findings=tuple(in_files(analysis.findings, self.target.covers)))

    def report(self, notes: list[str]) -> Analysis:
        """What the run reports: the given paths' classes, and every class of the project that fails a use
        made in a given file. A worker (or any file the contract comes from) changes what every wrapper must
        provide, so a pre-commit run over a staged worker change must fail on the wrapper it breaks, though
        the wrapper is not staged; ``notes`` then says why classes outside the paths are reported."""
        from spec_contract.engine import in_files
        from spec_contract.report import from_cwd

        analysis = self.target.project.analyze()
        self.checked_any = bool(analysis.checked)
        if self.target.whole:
            return analysis
        covers = self.target.covers
        # a class that fails a use made in a given file (the use's line says so), else what the given files show
        findings = tuple(g for f in analysis.findings for g in (
            [f] if covers(f.path) or any(covers(s.path) for s in f.call_sites) else in_files([f], covers)))
        cwd = Path.cwd()  # named as the text report names files: from where the user stands
        through_uses = sorted({from_cwd(s.path, cwd, (analysis.root,)) for f in findings
                               if not self.target.covers(f.path) for s in f.call_sites if self.target.covers(s.path)})
        if through_uses:
            notes.append(f"also reporting the classes elsewhere in the project that fail the uses in "
                         f"{', '.join(through_uses)}")
        checked = tuple(k for k in analysis.checked if self.target.covers(analysis.index.path_of(k.module) or ""))
        return dataclasses.replace(analysis, findings=findings, checked=checked)

    def invalidate(self, path: str) -> None:
        self.target.project.invalidate(path)


def _baseline(args: argparse.Namespace, targets: list[_Target], analyses: tuple[Analysis, ...]
              ) -> tuple[frozenset[str], tuple[BaselineEntry, ...]]:
    """Fingerprints of the findings the baseline (``--baseline``, else each project's ``baseline`` key)
    covers, and its stale entries among the given paths."""
    from spec_contract.engine import load_baseline

    if getattr(args, "write_baseline", None) is not None or args.command != "check":
        return frozenset(), ()
    covered: set[str] = set()
    stale: list[BaselineEntry] = []
    loaded: dict[Path, Baseline] = {}
    for target, analysis in zip(targets, analyses):
        file = args.baseline or (Path(target.project.config.baseline) if target.project.config.baseline else None)
        if file is None:
            continue
        if file not in loaded:
            loaded[file] = load_baseline(file)
        match = loaded[file].match(analysis.findings, _covers(target))
        covered |= match.baselined
        stale += match.stale
    return frozenset(covered), tuple(stale)


def _covers(target: _Target) -> Callable[[str], bool]:
    """Whether a baseline entry's path (relative to the project; empty: the project) is among the PATHs."""
    root = target.found.root
    return lambda rel: target.covers(str(root / rel)) if rel else target.whole


def _checked(targets: list[_Target]) -> Callable[[BaselineEntry], bool]:
    """Whether this run checked what a baseline entry records: its path is among the PATHs of a project the
    run analysed, and that project's selection (``select``, narrowed by ``--select``) reports its code. The
    entries it did not check stay in a re-written baseline."""
    return lambda entry: any(_covers(t)(entry.path) and entry.code in t.project.config.select for t in targets)
