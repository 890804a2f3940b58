"""Starts the spec-contract server that this extension carries, with the user's own Python (issue 23, item 1).

The extension runs ``<python> -I bundled/tool/server.py serve --stdio``: no pip step. ``bundled/libs`` (the server
and its pure-Python dependencies) and ``bundled/native/cp3XY`` (libcst, compiled, for this CPython) go first on
``sys.path``, as in Microsoft's vscode-python-tools-extension-template, so the versions the extension was built and
tested with are the ones that run, whatever the environment has. ``-I`` keeps the workspace (the working
directory) and this folder off ``sys.path``; the engine's worker processes inherit ``sys.path`` from here.

``--probe`` prints, as one JSON line, what the extension shows the user: the interpreter's full path, its version
and whether the quick fixes can run (libcst is there for this Python). Exit 3: the Python is too old.
"""

import json
import os
import platform
import sys

MINIMUM = (3, 10)
BUNDLED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NATIVE = os.path.join(BUNDLED, "native", f"cp{sys.version_info[0]}{sys.version_info[1]}")


def main() -> None:
    if sys.version_info < MINIMUM:
        sys.stderr.write(f"spec-contract needs Python {'.'.join(map(str, MINIMUM))} or newer; {sys.executable} is "
                         f"Python {platform.python_version()}\n")
        raise SystemExit(3)
    native = [NATIVE] if platform.python_implementation() == "CPython" and os.path.isdir(NATIVE) else []
    sys.path[0:0] = [os.path.join(BUNDLED, "libs"), *native]
    if sys.argv[1:] == ["--probe"]:
        print(json.dumps({"executable": sys.executable, "version": platform.python_version(),
                          "quickFixes": bool(native)}))
        return
    carried = os.path.dirname(NATIVE)
    if not native and os.path.isdir(carried):  # (no folder at all: a launcher run from a checkout, in the tests)
        sys.stderr.write(f"spec-contract: this extension carries libcst for {', '.join(sorted(os.listdir(carried)))} "
                         f"only; with {sys.executable} (Python {platform.python_version()}) diagnostics and hover "
                         f"work, quick fixes do not\n")
    from spec_contract.cli import entry

    sys.argv[0] = "spec-contract"
    entry()


if __name__ == "__main__":
    main()
