"""Terminal text with ANSI colour (SGR) escapes as a small self-contained HTML page, for the screenshots of
docs/screenshots.py: a browser draws what a terminal showed, so headless Chromium can photograph the CLI's
text output and a tmux pane holding Neovim without a terminal emulator of its own.

Only SGR (``ESC [ … m``) is drawn: bold, dim, italic, underline, reverse, the 16 colours, the 256-colour
palette (``38;5;n``) and 24-bit colour (``38;2;r;g;b``), as ``spec-contract check`` and ``tmux capture-pane
-e`` write them; any other escape sequence is dropped. Every character of the text is HTML-escaped.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, replace

# A dark terminal's 16 colours (xterm's defaults, a little softened): black, red, green, yellow, blue, magenta,
# cyan, white, then the bright ones.
PALETTE16 = (
    "#1e1e1e", "#e05561", "#8cc265", "#d18f52", "#4aa5f0", "#c162de", "#42b3c2", "#d0d0d0",
    "#6f737b", "#ff616e", "#a5e075", "#f0a45d", "#4dc4ff", "#de73ff", "#4cd1e0", "#f5f5f5",
)
BACKGROUND = "#15171c"
FOREGROUND = "#d7dae0"
FONT = "'DejaVu Sans Mono', 'Liberation Mono', monospace"
ESCAPE = re.compile(r"\x1b\[([0-9;:?]*)([A-Za-z])|\x1b[()][A-Za-z0-9]|\x1b[=>]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def colour256(n: int) -> str:
    """xterm's 256-colour palette: the 16 colours, a 6×6×6 cube, then 24 greys."""
    if n < 16:
        return PALETTE16[n]
    if n < 232:
        n -= 16
        steps = [0 if v == 0 else 55 + 40 * v for v in (n // 36, n // 6 % 6, n % 6)]
        return "#{:02x}{:02x}{:02x}".format(*steps)
    grey = 8 + 10 * (n - 232)
    return f"#{grey:02x}{grey:02x}{grey:02x}"


@dataclass(frozen=True)
class Pen:
    """The attributes the next characters are drawn with."""

    fg: str | None = None
    bg: str | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    reverse: bool = False

    def css(self) -> str:
        fg, bg = self.fg, self.bg
        if self.reverse:
            fg, bg = bg or BACKGROUND, fg or FOREGROUND
        rules = [f"color:{fg}" if fg else "", f"background:{bg}" if bg else "",
                 "font-weight:bold" if self.bold else "", "opacity:.7" if self.dim else "",
                 "font-style:italic" if self.italic else "", "text-decoration:underline" if self.underline else ""]
        return ";".join(rule for rule in rules if rule)


def _extended(codes: list[int]) -> tuple[str | None, list[int]]:
    """The colour of ``5;n`` or ``2;r;g;b`` after a 38, 48 or 58, and the codes after it."""
    if codes[:1] == [5] and len(codes) >= 2:
        return colour256(codes[1] % 256), codes[2:]
    if codes[:1] == [2] and len(codes) >= 4:
        return "#{:02x}{:02x}{:02x}".format(*(min(255, c) for c in codes[1:4])), codes[4:]
    return None, codes[1:]


def _numbers(part: str) -> list[int]:
    return [int(number) if number.isdigit() else 0 for number in part.split(":")]


def apply(pen: Pen, parameters: str) -> Pen:
    """The pen after one SGR sequence's parameters (``""`` is a reset, as ``ESC [ m`` is). A part with colons
    is one attribute with its sub-parameters (``4:3``, a curly underline; ``38:2::r:g:b``)."""
    switches = {1: {"bold": True}, 2: {"dim": True}, 3: {"italic": True}, 4: {"underline": True},
                7: {"reverse": True}, 22: {"bold": False, "dim": False}, 23: {"italic": False},
                24: {"underline": False}, 27: {"reverse": False}, 39: {"fg": None}, 49: {"bg": None}}
    parts = parameters.split(";") if parameters else ["0"]
    while parts:
        part, parts = parts[0], parts[1:]
        code, *sub = _numbers(part)
        if ":" in part and code in (38, 48, 58):  # 38:2::r:g:b (with a colour space id) or 38:2:r:g:b, 38:5:n
            colour, _ = _extended(sub[:1] + sub[-3:] if sub[:1] == [2] else sub)
        elif code in (38, 48, 58):  # the colour's numbers are the next parts
            colour, rest = _extended([number for later in parts for number in _numbers(later)])
            parts = parts[len(parts) - len(rest):]
        else:
            colour = None
        if code == 0:
            pen = Pen()
        elif code == 4 and sub:
            pen = replace(pen, underline=sub[0] != 0)
        elif code in switches:
            pen = replace(pen, **switches[code])  # type: ignore[arg-type]
        elif 30 <= code <= 37 or 90 <= code <= 97:
            pen = replace(pen, fg=PALETTE16[code - 30 if code < 90 else code - 82])
        elif 40 <= code <= 47 or 100 <= code <= 107:
            pen = replace(pen, bg=PALETTE16[code - 40 if code < 100 else code - 92])
        elif code in (38, 48) and colour is not None:  # 58, the underline's colour, is not drawn
            pen = replace(pen, **{"fg" if code == 38 else "bg": colour})
    return pen


def to_html(text: str) -> str:
    """``text``'s characters, escaped, in spans coloured as its SGR sequences say."""
    out: list[str] = []
    pen = Pen()
    position = 0
    for match in [*ESCAPE.finditer(text), None]:
        chunk = text[position:match.start() if match else len(text)]
        if chunk:
            style = pen.css()
            escaped = html.escape(chunk)
            out.append(f'<span style="{style}">{escaped}</span>' if style else escaped)
        if match is None:
            break
        position = match.end()
        if match.group(2) == "m":
            pen = apply(pen, match.group(1))
    return "".join(out)


def page(text: str, title: str, font_px: int = 14) -> str:
    """A whole page drawing ``text`` as a dark terminal would, with no margin around it but its padding."""
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
html, body {{ margin: 0; background: {BACKGROUND}; }}
pre {{ margin: 0; padding: 12px 14px; color: {FOREGROUND}; font: {font_px}px/1.35 {FONT}; white-space: pre; }}
</style></head>
<body><pre>{to_html(text)}</pre></body></html>
"""


def extent(text: str) -> tuple[int, int]:
    """The columns of ``text``'s widest line and its number of lines, escape sequences not counted."""
    lines = ESCAPE.sub("", text).rstrip("\n").split("\n")
    return max(len(line) for line in lines), len(lines)
