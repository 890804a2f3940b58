"""The engine's helper processes never import from the workspace, however the server was started (issue 24, item 1).

A language server runs threads, so a cold run on a large tree starts its helpers through multiprocessing's fork
server, which is ``python -c …`` in the server's working directory, the user's project: without ``-I``, ``-c`` put
that directory first on ``sys.path``, so a ``multiprocessing.py`` or ``selectors.py`` there ran in the fork
server (and the fork server's death then failed the whole analysis). Each launch command the README and the editor
configurations mention starts the server in a hostile workspace large enough for helpers, with an empty cache so
the cold run needs them; the test also sees the fork server among the server's children, so it knows the helpers
did start.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from framing import RawServer
from hostile_workspace import imported_before_main, ran
from test_hostile_launch import WRAPPER, hostile_demo

CONSOLE_SCRIPT = Path(sys.executable).with_name("spec-contract")
LAUNCHES = {
    # README, VS Code's `server` default and the Neovim README's "safe too"
    "spec-contract serve": [str(CONSOLE_SCRIPT), "serve"],
    "python -I -m spec_contract serve": [sys.executable, "-I", "-m", "spec_contract", "serve"],
    # Not recommended anywhere (a workspace spec_contract.py shadows the package itself, and so do the modules
    # the interpreter's -m start-up imports, which nothing can prevent), but everything after the package is
    # loaded must still stay out of the workspace.
    "python -m spec_contract serve": [sys.executable, "-m", "spec_contract", "serve"],
}


def _children(pid: int) -> list[str]:
    """The command lines of the processes ``pid`` started and that still run (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if entry.name.isdigit() and int(fields[1]) == pid:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, IndexError, ValueError):
            continue  # ended meanwhile, or not a process
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else True,
                    reason="one core: the engine starts no helper processes at all")
@pytest.mark.parametrize("launch", list(LAUNCHES))
def test_no_launch_command_lets_a_helper_process_import_from_the_workspace(launch, tmp_path):
    argv = LAUNCHES[launch]
    if not Path(argv[0]).exists():
        assert os.environ.get("CI") != "true", f"no console script next to {sys.executable}"
        pytest.skip(f"no console script next to {sys.executable} (not installed in a venv)")
    workspace, markers = hostile_demo(tmp_path)
    if "-I" not in argv and argv[0] == sys.executable:
        for name in {"spec_contract", *imported_before_main(sys.executable)}:
            (workspace / f"{name}.py").unlink()
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "cache")}  # cold: the helpers are needed
    env.pop("SPEC_CONTRACT_JOBS", None)
    env.pop("PYTHONSAFEPATH", None)
    with RawServer(argv, cwd=workspace, env=env) as server:
        server.initialize(workspace)
        uri = (workspace / WRAPPER).as_uri()
        server.wait_for(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            and any(d.get("code") == "SC001" for d in m["params"]["diagnostics"]),
            "SC001 diagnostics for the wrapper",
        )
        children = _children(server.process.pid)
        assert "result" in server.call("shutdown")
        server.notify("exit")
        assert server.exit_code() == 0
    assert any("multiprocessing.forkserver" in c for c in children), children  # the helpers did start
    assert ran(markers) == []


def test_isolating_the_helpers_leaves_this_process_environment_as_it_was(monkeypatch):
    """PYTHONSAFEPATH is set while the fork server starts, not for good: a host program's (or this test
    suite's) later ``python -m`` keeps the environment it had."""
    import threading

    from spec_contract.engine import parallel

    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    release = threading.Event()
    other = threading.Thread(target=release.wait)  # a second thread, as in the server: no plain fork
    other.start()
    try:
        context = parallel._context()
        assert context is not None and context.get_start_method() != "fork"
        results = dict(parallel._shared(4, os.getpid().__add__, 2, context))
    finally:
        release.set()
        other.join()
    assert sorted(results) == [0, 1, 2, 3]
    assert "PYTHONSAFEPATH" not in os.environ
