"""The ``spec-contract`` command: ``check`` and ``contract`` for terminals and CI, ``serve`` for editors.

This module only translates: arguments → :class:`~spec_contract.engine.project.Project`, analysis →
a report format, findings → exit code (0: no error-level finding, 1: findings, 2: usage or configuration
error, always with a one-line message).
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import sys
import time
import tokenize
from pathlib import Path

from spec_contract import __version__

# The engine and the reports are imported where they are used: ``spec-contract serve`` must start as fast
# as a bare pygls server, and the language server loads the engine on its own thread when it needs it.


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as the interface promises
        self.exit(2, f"spec-contract: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="spec-contract", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"spec-contract {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("paths", nargs="*", metavar="PATH", help="project roots or installed package directories (default: .)")
        p.add_argument("--profile", help="engine profile (default: sglang, or the pyproject's)")
        p.add_argument("--config", type=Path, help="a TOML file with the [tool.spec-contract] settings to use")
        p.add_argument("--no-cache", action="store_true", help="do not read or write the summary cache")
        p.add_argument("--python", help="interpreter whose installed engine supplies the contract for out-of-tree models")

    check = sub.add_parser("check", help="report wrapper classes that do not forward contract methods")
    common(check)
    check.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    check.add_argument("--fix", action="store_true", help="add the missing delegations to the files")
    check.add_argument("--select", help="comma-separated codes to report (default: SC001,SC002)")
    contract = sub.add_parser("contract", help="print the contract derived from the workers")
    common(contract)
    contract.add_argument("--format", choices=("text", "json"), default="text")
    sub.add_parser("serve", help="run the language server: stdio by default (--stdio is accepted), or --tcp/--ws "
                                 "with --host and --port")
    return parser


def _projects(args: argparse.Namespace) -> list:
    from spec_contract.engine.config import ConfigError, load_config, with_select
    from spec_contract.engine.project import Project

    roots = [Path(p) for p in (args.paths or ["."])]
    projects = []
    overrides = {"profile": args.profile} if args.profile else None
    for root in roots:
        if not root.exists():
            raise ConfigError(f"{root}: no such file or directory")
        if args.config is not None and not args.config.is_file():
            raise ConfigError(f"{args.config}: no such config file")
        config = load_config(root.resolve() if root.is_dir() else root.resolve().parent, args.config, overrides)
        if getattr(args, "select", None):
            config = with_select(config, [c.strip() for c in args.select.split(",") if c.strip()])
        projects.append(Project(root, config, python=args.python, use_cache=not args.no_cache))
    return projects


def _write(path: str, text: str) -> None:
    """Write back in the file's own encoding (its PEP 263 cookie), through a temporary file."""
    with open(path, "rb") as handle:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(handle.read()).readline)
    tmp = f"{path}.spec-contract.tmp"
    with open(tmp, "w", encoding="utf-8" if encoding == "utf-8-sig" else encoding, newline="") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _fix(projects: list) -> int:
    from spec_contract.engine.fix import apply_edits, delegation_edits

    changed = 0
    for project in projects:
        analysis = project.analyze()
        edits = delegation_edits(analysis, analysis.findings)
        by_path: dict[str, list] = {}
        for edit in edits:
            by_path.setdefault(edit.path, []).append(edit)
        for path, file_edits in by_path.items():
            source = analysis.source(path)
            if source is None:
                continue
            _write(path, apply_edits(source, file_edits))
            project.invalidate(path)
            changed += 1
    return changed


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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:  # before argparse: its REMAINDER would not take `--stdio`, `--tcp`, …
        from spec_contract.lsp.server import main as serve

        return serve(argv[1:])
    args = _parser().parse_args(argv)
    # One run, then exit: pausing the cyclic collector for all of it also spares analyze() the collection
    # and freeze it does for a long-lived server (a fifth of a second on a large tree).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if collecting:
            gc.enable()


def _run(args: argparse.Namespace) -> int:
    from spec_contract.engine.config import ConfigError
    from spec_contract.report import Report

    started = time.perf_counter()
    try:
        projects = _projects(args)
        fixed = _fix(projects) if getattr(args, "fix", False) else 0
        report = Report(tuple(p.analyze() for p in projects), time.perf_counter() - started)
    except ConfigError as exc:
        print(f"spec-contract: error: {exc}", file=sys.stderr)
        return 2
    if args.command == "contract":
        from spec_contract.report.machine import render_json_contract
        from spec_contract.report.text import render_contract

        _emit(render_json_contract(report) if args.format == "json" else render_contract(report))
        return 0
    from spec_contract.report import machine, text

    render = {"text": text.render, "json": machine.render_json, "sarif": machine.render_sarif,
              "github": machine.render_github}[args.format]
    output = render(report)
    if output:
        _emit(output)
    if fixed and args.format == "text":
        print(f"Fixed {fixed} file(s).")
    return 1 if any(f.severity == "error" for f in report.findings) else 0
