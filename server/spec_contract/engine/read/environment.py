"""Finding the serving engine installed in a Python environment, for out-of-tree model packages.

A user's own package of models has no workers; its contract and the engine classes its models wrap or
subclass come from the engine installed where the models run. That environment's ``site-packages`` folders
are found from its files alone: ``pyvenv.cfg`` beside or above the interpreter (a virtual environment, with
its base installation when it includes the system site-packages), else the ``lib/pythonX.Y`` folder of the
prefix above the interpreter (an installation, a conda environment). The engine found there is then read as
source like any other tree, never imported.

Nothing of the environment runs. Starting its interpreter, even only to ask for ``sys.path``, runs its site
module: every ``import`` line of every ``.pth`` file and ``sitecustomize``, code that whoever installed a
package there chose (a colleague's environment, one built from an untrusted requirements file). ``.pth``
files are read as text, for their path lines (an editable install's source folder); their ``import`` lines
are skipped. Only an interpreter whose files do not tell its prefix and version (a wrapper script, such as a
pyenv shim; a copied binary beside several versions' libraries) is started, isolated and with a time limit,
to print its real executable and version (:data:`ASK`); what that names is then read the same way.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from spec_contract.engine.config import ConfigError
from spec_contract.engine.read.files import read_bytes, read_text
from spec_contract.engine.read.given import given_path

# What a wrapper interpreter is asked: -I (no PYTHON* variables, no user site, not the working directory) and
# -S (no site module: no .pth file, no sitecustomize) leave nothing of the environment to run.
ASK = ("-I", "-S", "-c", "import sys; print(sys.executable); print('%d.%d' % sys.version_info[:2])")
ASK_SECONDS = 10.0  # a healthy interpreter answers in a fraction of a second; one waiting on a prompt never does
_VERSIONED = re.compile(r"python(\d+\.\d+t?)")  # an interpreter's or a lib/ folder's name; t: free-threaded


def locate_engine(python: str | None, package: str) -> Path | None:
    """The directory of ``package`` on the path of ``python`` (default: the active virtual or conda
    environment, else this interpreter)."""
    for folder in search_path(python):
        candidate = folder / package
        if os.path.isfile(candidate / "__init__.py"):
            return candidate.resolve()
    return None


def search_path(python: str | None) -> list[Path]:
    """The folders ``python`` imports third-party packages from, in its order: ``$PYTHONPATH`` (as that
    interpreter would take it from this environment), the user's site-packages when the environment uses
    it, then each site-packages folder, each followed by the path lines of its ``.pth`` files."""
    prefixes, user = _environment(python)
    folders = [Path(entry) for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    if user and not os.environ.get("PYTHONNOUSERSITE"):
        base = os.environ.get("PYTHONUSERBASE") or os.path.expanduser("~/.local")
        folders += _with_pth_lines([Path(base, "lib", prefixes[0][1], "site-packages")])
    for prefix, lib in prefixes:
        folders += _with_pth_lines([prefix / "lib" / lib / "site-packages", prefix / "lib64" / lib / "site-packages",
                                    prefix / "local" / "lib" / lib / "dist-packages",  # Debian's own Pythons
                                    prefix / "lib" / "python3" / "dist-packages", prefix / "lib" / lib / "dist-packages",
                                    prefix / "Lib" / "site-packages"])  # Windows
    return folders


# (prefix, its lib/ folder's name) of the environment, then of the installation whose packages it includes
_Prefixes = list[tuple[Path, str]]


def _environment(python: str | None) -> tuple[_Prefixes, bool]:
    """The prefixes whose site-packages ``python`` reads, and whether it reads the user's too."""
    if python is None:
        for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):  # an activated environment, as `python` would find it
            value = os.environ.get(variable)
            if value and os.path.realpath(value) != os.path.realpath(sys.prefix):
                found = _of_prefix(Path(value))
                if found is not None:
                    return found
        return _of_interpreter(Path(sys.executable), "this interpreter")
    given = given_path(python, "--python")
    if given.is_dir():  # an environment's folder
        found = _of_prefix(given)
        if found is None:
            raise ConfigError(f"--python {python}: not a Python environment (no pyvenv.cfg, no lib/pythonX.Y)")
        return found
    if not given.is_file():
        raise ConfigError(f"--python {python}: not a usable Python interpreter (no such file)")
    return _of_interpreter(given, f"--python {python}")


def _of_interpreter(executable: Path, named: str, asked: str | None = None) -> tuple[_Prefixes, bool]:
    """The environment of the interpreter at ``executable``; ``asked``: the version it printed when it was
    asked (:func:`_ask`), which is done only when its files do not tell."""
    # Python looks for pyvenv.cfg beside the interpreter and one folder up, from the path it was started by
    # (a virtual environment's bin/python is a link to its base interpreter: resolved, it is no longer in it)
    for folder in (executable.parent, executable.parent.parent):
        if (folder / "pyvenv.cfg").is_file():
            return _of_venv(folder)
    real = executable.resolve()
    start = read_bytes(str(real), 2)
    if asked is not None or not (isinstance(start, bytes) and start.startswith(b"#!")):  # a script wraps one
        named_version = _VERSIONED.fullmatch(real.name)
        version = asked or (named_version.group(1) if named_version else None)
        for prefix in real.parents:  # the prefix holds the standard library: Python's own search, upwards
            lib = _lib_folder(prefix, version, "os.py")
            if lib is not None:
                return [(prefix, lib)], True
    if asked is not None:
        raise ConfigError(f"{named}: not a usable Python interpreter (no lib/python{asked}/os.py above {real})")
    answer, version = _ask(executable, named)
    return _of_interpreter(Path(answer), named, version)


def _of_prefix(folder: Path) -> tuple[_Prefixes, bool] | None:
    """A virtual environment's or an installation's folder (``$VIRTUAL_ENV``, ``$CONDA_PREFIX``)."""
    if (folder / "pyvenv.cfg").is_file():
        return _of_venv(folder)
    lib = _lib_folder(folder, None, "os.py")
    return ([(folder, lib)], True) if lib is not None else None


def _of_venv(folder: Path) -> tuple[_Prefixes, bool]:
    """A virtual environment: its own site-packages, then, with ``include-system-site-packages``, its base
    installation's (``home`` is the base interpreter's folder), and the user's, as ``site`` reads them then."""
    settings = _pyvenv_cfg(folder / "pyvenv.cfg")
    written = settings.get("version") or settings.get("version_info") or ""  # venv's, virtualenv's and uv's
    version = ".".join(written.split(".")[:2]) or None
    lib = _lib_folder(folder, version, "site-packages")
    if lib is None:
        raise ConfigError(f"{folder}: a virtual environment without lib/python{version or 'X.Y'}/site-packages")
    prefixes = [(folder, lib)]
    included = settings.get("include-system-site-packages", "").lower() == "true"
    home = settings.get("home")
    if included and home:
        for prefix in (Path(home), *Path(home).parents):
            base = _lib_folder(prefix, lib[len("python"):], "os.py")
            if base is not None:
                prefixes.append((prefix, base))
                break
    return prefixes, included


def _pyvenv_cfg(path: Path) -> dict[str, str]:
    """``key = value`` lines, as the interpreter reads them (anything else is skipped)."""
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    pairs = (line.partition("=") for line in text.splitlines())
    return {key.strip().lower(): value.strip() for key, eq, value in pairs if eq}


def _lib_folder(prefix: Path, version: str | None, landmark: str) -> str | None:
    """The name of the folder under ``prefix/lib`` (or ``lib64``) holding ``landmark`` for ``version``
    (``python3.11``; ``python3.13t``, free-threaded), or for the only version there when none is given;
    on Windows, ``""`` when ``prefix/Lib`` holds it (no folder per version there)."""
    if os.name == "nt" and os.path.exists(prefix / "Lib" / landmark):
        return ""
    found: set[str] = set()
    for lib in ("lib", "lib64"):
        try:
            names = os.listdir(prefix / lib)
        except OSError:
            continue
        found.update(n for n in names if (m := _VERSIONED.fullmatch(n)) and
                     (version is None or m.group(1) in (version, version + "t")) and
                     os.path.exists(prefix / lib / n / landmark))
    names = sorted(found)  # python3.13 before python3.13t: the version as given first
    return names[0] if len(names) == 1 or version is not None and names else None


def _with_pth_lines(folders: list[Path]) -> list[Path]:
    """Each existing folder, followed by the folders its ``.pth`` files name, in the order ``site`` adds
    them (files by name; an ``import`` line, which ``site`` would run, is skipped)."""
    out = []
    for folder in folders:
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".pth") and not n.startswith("."))
        except OSError:
            continue
        out.append(folder)
        for name in names:
            try:
                lines = read_text(folder / name).splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            out += [folder / line.rstrip() for line in lines
                    if line.strip() and not line.startswith(("#", "import ", "import\t"))]
    return out


def _ask(executable: Path, named: str) -> tuple[str, str]:
    """``executable``'s real interpreter and version, from the isolated run :data:`ASK`; a one-line
    ConfigError when it fails or does not answer within :data:`ASK_SECONDS`."""
    ran = f"{executable} {' '.join(ASK[:3])} '…'"
    try:
        # its own session: a wrapper's children (a shell's `sleep`, a prompt) are stopped with it
        process = subprocess.Popen([str(executable), *ASK], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, start_new_session=True, text=True)
    except OSError as exc:
        raise ConfigError(f"{named}: not a usable Python interpreter ({exc.strerror or exc})") from None
    try:
        out, _ = process.communicate(timeout=ASK_SECONDS)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:  # gone by itself meanwhile
            pass
        process.communicate()
        raise ConfigError(f"{named}: no answer within {ASK_SECONDS:.0f} s (ran `{ran}`)") from None
    lines = out.splitlines()
    if process.returncode != 0 or len(lines) != 2 or not lines[0] or not _VERSIONED.fullmatch("python" + lines[1]):
        raise ConfigError(f"{named}: not a usable Python interpreter (`{ran}` exited {process.returncode})")
    return lines[0], lines[1]
