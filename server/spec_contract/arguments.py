"""The command line's argument parser, for ``check`` and its siblings and for ``serve`` alike.

argparse answers a usage error with the whole usage block and the message, three lines or more; the
interface promises one line and exit 2 (a wrapper script or an editor's log shows that line, not the block).
"""

from __future__ import annotations

import argparse
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"spec-contract: error: {message}\n")
