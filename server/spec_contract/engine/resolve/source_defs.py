"""One function of a file, parsed from its text alone: the engine's own functions the analysis reads facts from
(its generation test, its draft-config rewrites, a class's ``__init__``) sit in large files the check never
otherwise parses whole (SGLang's ``model_config.py`` is 2,400 lines), so only the ``def`` statement is cut out
of the text and parsed, never the file, and nothing is imported or run.

A statement is its ``def`` line and every line after it up to the first that starts no deeper than the
``def`` (blank lines, comments and a signature's closing parenthesis do not end it). A method's lines are
parsed with the method's indentation taken off; a line of a multi-line string that is less indented keeps
its own, which changes only the string. Text that does not parse so gives nothing: a fact that cannot be
read is never made up.
"""

from __future__ import annotations

import ast
import functools
import re

_SIGNATURE = re.compile(r"[ \t]*\(")


def split_dotted(dotted: str) -> tuple[str, str]:
    """A dotted function or method as (module, qualname in it): the qualname starts at the first capitalised
    part (a class: ``….model_config.ModelConfig._config_draft_model``), else it is the last part."""
    parts = dotted.split(".")
    end = next((i for i, part in enumerate(parts) if i and part[:1].isupper()), len(parts) - 1)
    return ".".join(parts[:end]), ".".join(parts[end:])


def definition_starts(text: str, qualname: str) -> list[int]:
    """The offsets of the lines that define ``qualname`` in ``text``: a module-level function (``name``, in
    the first column), or a method (``Class.name``, in a class of that name), in file order (an ``@overload``
    stub comes before the definition that runs)."""
    owner, _, name = qualname.rpartition(".")
    out = []
    at = text.find(f"def {name}")  # str.find, then the line's shape: a multi-line regex scans 100 KB slowly
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        indent = _depth(text[start:at])
        if re.fullmatch(r"(?:async[ \t]+)?", text[start + len(indent):at]) \
                and _SIGNATURE.match(text, at + 4 + len(name)) \
                and (_enclosing_class(text, start) == owner.rpartition(".")[2] if owner else not indent):
            out.append(start)
        at = text.find(f"def {name}", at + 1)
    return out


def statement_at(text: str, line: int, name: str) -> tuple[int, str] | None:
    """The offset and text of the ``def name`` statement on ``line`` (0-based), or None."""
    at, counted, lines = text.find(f"def {name}"), 0, 0
    while at >= 0:
        lines += text.count("\n", counted, at)  # in C: a file's lines are never split for one statement
        counted = at
        if lines == line:
            start = text.rfind("\n", 0, at) + 1
            return start, _statement(text, start)
        if lines > line:
            return None
        at = text.find(f"def {name}", at + 1)
    return None


def module_constant(text: str, name: str) -> ast.expr | None:
    """The value of the module-level ``name = …`` (or ``name: T = …``) in ``text``, its statement alone parsed; None
    when there is none, or it does not parse."""
    starts = ([0] if text.startswith(name) else []) + [m.start() + 1 for m in re.finditer("\n" + re.escape(name), text)]
    for at in starts:
        if re.match(rf"{re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)", text[at:at + len(name) + 200]):
            try:
                body = ast.parse(_statement(text, at)).body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            if len(body) == 1 and isinstance(body[0], (ast.Assign, ast.AnnAssign)) and body[0].value is not None:
                return body[0].value
            return None
    return None


def parse_statement(text: str, start: int,
                    statement: str | None = None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The ``def`` statement whose line starts at offset ``start`` (its text, when known), parsed; None if it
    does not parse."""
    lines = (statement if statement is not None else _statement(text, start)).splitlines(keepends=True)
    prefix = _depth(lines[0]) if lines else ""
    source = "".join(line[len(prefix):] if line.startswith(prefix) else line for line in lines)
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(body) != 1 or not isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return body[0]


def _statement(text: str, start: int) -> str:
    """The text of the statement that starts at offset ``start`` (see the module docstring): up to the first
    line below it that starts with a character no deeper than its own (not a comment, not a ``)``)."""
    end = _line_end(text, start)
    found = _next_statement(len(_depth(text[start:end]))).search(text, end - 1)
    return text[start:found.start() + 1 if found is not None else len(text)]


@functools.lru_cache(maxsize=16)
def _next_statement(depth: int) -> re.Pattern[str]:
    """A newline before a line indented at most ``depth`` characters whose first character starts a statement."""
    return re.compile(rf"\n(?=[ \t]{{0,{depth}}}[^ \t\r\n#)])")


def _line_end(text: str, at: int) -> int:
    """The offset just past the line that holds offset ``at`` (its newline included)."""
    found = text.find("\n", at)
    return len(text) if found < 0 else found + 1


def _depth(line: str) -> str:
    """The line's indentation."""
    return line[:len(line) - len(line.lstrip(" \t"))]


def _enclosing_class(text: str, start: int) -> str | None:
    """The name of the class statement the line at offset ``start`` sits in directly (the nearest line above it
    that starts less deep), or None when that line opens no class."""
    depth = len(_depth(text[start:start + 200]))
    end = start
    while end > 0:
        begin = text.rfind("\n", 0, end - 1) + 1
        line = text[begin:end]
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", ")", "@")) and len(_depth(line)) < depth:
            found = re.match(r"class[ \t]+(\w+)", stripped)
            return found.group(1) if found else None
        end = begin
    return None
