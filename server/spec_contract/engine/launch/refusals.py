"""What the engine says when a capability gate refuses a class: the message of the ``raise`` the gate leads to.

A refusal is cheap (the server stops at start-up with a clear message), but the user still wants to know which
message to expect. A gate's use records the line of the gate's test (``CallSite.gate_line``); the refusal is
the first ``raise`` after it in the same function (the ``if not hasattr(...)`` body, the ``else`` of a
``hasattr`` chain, the ``if x is None`` after a ``getattr(..., None)``). Its message is the exception's first
argument as written: literal text kept, each ``{expression}`` of an f-string shown as written. The worker
file is read as text and parsed, never imported; a gate whose raise cannot be found gets no message.
"""

from __future__ import annotations

import ast
import os
from functools import lru_cache

from spec_contract.engine.read.files import decode, read_bytes


@lru_cache(maxsize=64)
def _tree(path: str, stamp: tuple[int, int]) -> ast.Module | None:
    """The parsed file; ``stamp`` (size, modification time) keys the memo, so a changed file is parsed again."""
    text = decode(read_bytes(path)).text
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _words(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)
    return None


def gate_message(path: str, gate_line: int) -> tuple[int, str] | None:
    """(1-based line, message) of the refusal the gate tested on 0-based ``gate_line`` of ``path`` leads to."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    tree = _tree(path, (status.st_size, status.st_mtime_ns))
    if tree is None:
        return None
    line = gate_line + 1
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not functions:
        return None
    inner = max(functions, key=lambda n: n.lineno)  # the innermost function holding the gate
    raises = sorted((n for n in ast.walk(inner) if isinstance(n, ast.Raise) and n.lineno >= line and n.exc is not None),
                    key=lambda n: n.lineno)
    if not raises:
        return None
    exc = raises[0].exc
    message = _words(exc.args[0]) if isinstance(exc, ast.Call) and exc.args else None
    if message is None and exc is not None:
        message = ast.unparse(exc)
    return raises[0].lineno, " ".join((message or "").split())
