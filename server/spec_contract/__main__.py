"""``python -m spec_contract`` does what the ``spec-contract`` console script does.

Start it as ``python -I -m spec_contract``. Plain ``-m`` puts the working directory, usually the user's project,
first on ``sys.path``, so a ``spec_contract.py`` or ``runpy.py`` there runs before this file does: the editor
configurations shipped in ``editors/`` and ``vscode-client/`` all pass ``-I``, which never adds that entry (the
``spec-contract`` console script does not add it either).
"""

import os
import sys

if __name__ == "__main__":  # not when imported: a spawned worker of ``python path/to/__main__.py`` re-imports it
    # Started without -I after all: what this file could still be tricked into importing from the working
    # directory (argparse, typing, the engine's libcst, all imported below or later) is looked up
    # elsewhere from here on. The package itself is loaded already and finds its modules through __path__.
    if not sys.flags.isolated and not getattr(sys.flags, "safe_path", False) and sys.path[:1] == [os.getcwd()]:
        del sys.path[0]
    from spec_contract.cli import entry

    entry()
