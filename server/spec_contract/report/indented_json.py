"""``json.dumps(value, indent=N)``, byte for byte, in less than half its time.

The machine formats print their object indented (the shape users and tools have read since the first
release). The standard library indents only in its pure-Python encoder (CPython 3.11's C encoder does not
indent), a chain of generators that takes 8 ms on SGLang's 370 kB report, where this writer takes 3.6 ms (the
compact C encoder 2 ms). It walks the data in the same order: strings go through the C escaper ``json``
itself uses, numbers through the same ``repr``s, the same separators and indentation, so the text is the
same (``tests/test_indented_json.py`` compares the two on generated data and on a real report). A value of
a type JSON has no word for, or a circular one, is handed to ``json.dumps`` whole, so its errors stay the
standard ones.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii as _string

_INFINITY = float("inf")


class _Other(Exception):
    """A value this writer does not take: a key or a leaf of another type."""


def dumps(value: object, indent: int = 1) -> str:
    """What ``json.dumps(value, indent=indent)`` returns (its other arguments at their defaults).

    One closure over one list of pieces: a method call or an attribute look-up per value costs as much as
    the generators it replaces. A circular container recurses until Python stops it, and ``json.dumps``
    then says what it always says about it."""
    pieces: list[str] = []
    out = pieces.append
    newlines = ["\n" + " " * (indent * depth) for depth in range(16)]  # "\n" and each depth's indentation

    def write(value: object, depth: int) -> None:
        if depth + 1 == len(newlines):
            newlines.append("\n" + " " * (indent * (depth + 1)))
        if isinstance(value, dict):
            if not value:
                out("{}")
                return
            inner = newlines[depth + 1]
            separator, comma = "{" + inner, "," + inner
            for key, item in value.items():
                start = separator + (_string(key) if type(key) is str else _key(key)) + ": "
                separator = comma
                kind = type(item)  # the common leaves inline, with their key: most of the cost is per piece
                if kind is str:
                    out(start + _string(item))
                elif kind is int:
                    out(start + int.__repr__(item))
                elif item is None:
                    out(start + "null")
                elif item is True:
                    out(start + "true")
                elif item is False:
                    out(start + "false")
                else:
                    out(start)
                    write(item, depth + 1)
            out(newlines[depth] + "}")
        elif isinstance(value, (list, tuple)):
            if not value:
                out("[]")
                return
            inner = newlines[depth + 1]
            separator, comma = "[" + inner, "," + inner
            for item in value:
                if type(item) is str:
                    out(separator + _string(item))
                else:
                    out(separator)
                    write(item, depth + 1)
                separator = comma
            out(newlines[depth] + "]")
        else:
            out(_scalar(value))

    try:
        write(value, 0)
    except (_Other, RecursionError):
        return json.dumps(value, indent=indent)
    return "".join(pieces)


def _scalar(value: object) -> str:
    """A leaf as ``json`` writes it, in its order of tests (``bool`` before ``int``, subclasses as their base)."""
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    raise _Other


def _float(value: float) -> str:
    """As ``json`` writes a float (``allow_nan``: NaN and the infinities by their JavaScript names)."""
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _key(key: object) -> str:
    """A dict key as ``json`` writes it: a string as it is, any other leaf as its text, quoted."""
    return _string(key) if isinstance(key, str) else _string(_scalar(key))
