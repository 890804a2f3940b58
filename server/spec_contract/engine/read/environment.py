"""Finding the serving engine installed in a Python environment, for out-of-tree model packages.

A user's own package of models has no workers; its contract and the engine classes its models wrap or
subclass come from the engine installed where the models run. jedi's environment API reads that
interpreter's ``sys.path`` (in a subprocess of that interpreter, importing nothing of the workspace);
the engine is then read as source like any other tree, never imported.

The subprocess runs in the server's working directory, the workspace, but jedi starts it as a script
(``python …/jedi/inference/compiled/subprocess/__main__.py``): the script's own directory is first on its
``sys.path``, not the working directory, so no file of the workspace can stand in for what it imports
(tests/reliability/test_hostile_launch.py plants such files).
"""

from __future__ import annotations

from pathlib import Path

from spec_contract.engine.config import ConfigError


def locate_engine(python: str | None, package: str) -> Path | None:
    """The directory of ``package`` on the ``sys.path`` of ``python`` (default: this interpreter)."""
    import jedi  # type: ignore[import-untyped]  # lazy: only out-of-tree checks need it; jedi ships no types

    try:
        environment = jedi.create_environment(python, safe=False) if python else jedi.get_default_environment()
        sys_path = environment.get_sys_path()
    except (jedi.InvalidPythonEnvironment, OSError) as exc:
        raise ConfigError(f"--python {python}: not a usable Python interpreter ({exc})") from None
    for entry in sys_path:
        candidate = Path(entry) / package
        if (candidate / "__init__.py").is_file():
            return candidate.resolve()
    return None
