"""Running ``spec-contract check`` as a user would (a fresh interpreter each time) and timing it."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Build:
    """A checkout to time and the interpreter that runs it (its venv: the checkout's dependencies)."""

    name: str  # how the tables call it: "A" (this checkout) or "B" (the one compared with)
    checkout: Path
    python: str

    def command(self, *args: str) -> list[str]:
        return [self.python, "-m", "spec_contract", *args]


THIS = Build("A", REPO, sys.executable)


@dataclass
class CheckRun:
    wall: float  # seconds from spawning the process to its exit
    cpu: float  # user + system seconds of the child: less disturbed by other load on a shared machine
    engine: float  # ``stats.seconds``: what the CLI measured in-process (projects, analysis, report)
    result: dict[str, Any]  # the parsed ``--format json`` output

    @property
    def startup(self) -> float:
        """Interpreter start, imports and writing the report: everything the engine timer does not see."""
        return self.wall - self.engine


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def env_with_cache(cache_dir: str | None, build: Build = THIS) -> dict[str, str]:
    """The build's package first on the path, and the summary cache in ``cache_dir`` (if given)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(build.checkout / "server"), env.get("PYTHONPATH")]))
    if cache_dir is not None:
        env["SPEC_CONTRACT_CACHE_DIR"] = cache_dir
    return env


def run_check(tree: Path, cache_dir: str | None, no_cache: bool, build: Build = THIS) -> CheckRun:
    """One ``python -m spec_contract check TREE --format json`` run; exit status 2 (usage error) raises."""
    command = build.command("check", str(tree), "--format", "json")
    if no_cache:
        command.append("--no-cache")
    before = children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_with_cache(cache_dir, build)
    )
    stdout, stderr = process.communicate()
    wall = time.perf_counter() - started
    cpu = children_cpu() - before  # communicate() reaped the child, so its rusage is counted now
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}: {stderr.decode(errors='replace')}")
    result = json.loads(stdout)
    return CheckRun(wall=wall, cpu=cpu, engine=float(result["stats"]["seconds"]), result=result)
