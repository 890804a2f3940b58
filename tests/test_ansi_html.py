"""docs/ansi_html.py, which draws terminal text for docs/screenshots.py: the text is HTML-escaped and its SGR
escapes become the colours and weights a terminal shows (what the CLI writes with colour forced, and what
``tmux capture-pane -e`` writes for Neovim: 256-colour, 24-bit, underline colours, colon sub-parameters)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("ansi_html", REPO / "docs" / "ansi_html.py")
assert _spec is not None and _spec.loader is not None
ansi_html = sys.modules["ansi_html"] = importlib.util.module_from_spec(_spec)  # a dataclass needs its module there
_spec.loader.exec_module(ansi_html)


class Runs(HTMLParser):
    """The text of a fragment as (style, text) runs, entities decoded, as a browser reads it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.styles: list[str] = [""]
        self.runs: list[tuple[str, str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.styles.append(dict(attrs).get("style") or "")

    def handle_endtag(self, tag):
        self.styles.pop()

    def handle_data(self, data):
        self.runs.append((self.styles[-1], data))


def runs(text: str) -> Runs:
    parser = Runs()
    parser.feed(ansi_html.to_html(text))
    parser.close()
    return parser


def style_of(text: str, part: str) -> str:
    return next(style for style, data in runs(text).runs if part in data)


def test_text_is_escaped_and_only_spans_are_added():
    hostile = "<script>alert('x')</script> & <img src=x onerror=y> \"quoted\""
    parsed = runs(f"\x1b[31m{hostile}\x1b[0m {hostile}")
    assert parsed.tags == ["span"]
    assert "".join(data for _, data in parsed.runs) == f"{hostile} {hostile}"
    assert "<script>" not in ansi_html.page(hostile, "<title>")
    assert "&lt;title&gt;" in ansi_html.page(hostile, "<title>")


def test_sixteen_colours_bold_and_reset():
    text = "\x1b[1mpath:6:7\x1b[0m: \x1b[1;31merror\x1b[0m \x1b[93mwarning\x1b[39m plain"
    assert style_of(text, "path") == "font-weight:bold"
    assert style_of(text, "error") == f"color:{ansi_html.PALETTE16[1]};font-weight:bold"
    assert style_of(text, "warning") == f"color:{ansi_html.PALETTE16[11]}"
    assert style_of(text, "plain") == ""


def test_256_colour_24_bit_and_reverse():
    assert style_of("\x1b[38;5;196mred", "red") == "color:#ff0000"
    assert style_of("\x1b[38;5;244mgrey", "grey") == "color:#808080"
    assert style_of("\x1b[48;2;7;8;13mfloat", "float") == "background:#07080d"
    assert style_of("\x1b[38:2::255:192:185mcolon", "colon") == "color:#ffc0b9"
    reversed_ = style_of("\x1b[7mstatus", "status")
    assert reversed_ == f"color:{ansi_html.BACKGROUND};background:{ansi_html.FOREGROUND}"


def test_underline_colour_and_styles_change_nothing_else():
    """Neovim's diagnostic underline: ``4`` then ``58;2;r;g;b`` (its colour, not drawn), and ``4:3`` (curly)
    is an underline, not italic."""
    assert style_of("\x1b[4m\x1b[58;2;255;192;185mLlava\x1b[96mFor", "Llava") == "text-decoration:underline"
    assert style_of("\x1b[4m\x1b[58;2;255;192;185mLlava\x1b[96mFor", "For") == (
        f"color:{ansi_html.PALETTE16[14]};text-decoration:underline")
    assert style_of("\x1b[4:3mcurly", "curly") == "text-decoration:underline"
    assert style_of("\x1b[4:3m\x1b[4:0mnone", "none") == ""


def test_other_escapes_are_dropped_and_not_counted():
    text = "\x1b]0;title\x07\x1b[?25l\x1b[2Jab\x1b[1mcd\x1b[0m\nx"
    assert "".join(data for _, data in runs(text).runs) == "abcd\nx"
    assert ansi_html.extent(text) == (4, 2)


def test_the_cli_output_with_colour_forced(tmp_path):
    """What docs/screenshots.py draws: check on the demo with FORCE_COLOR, its severity red, no escape left."""
    demo = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", demo)
    result = subprocess.run([sys.executable, "-I", "-m", "spec_contract", "check", "."], cwd=demo, capture_output=True,
                            text=True, timeout=600, env={**os.environ, "FORCE_COLOR": "1", "NO_COLOR": ""})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "\x1b[" in result.stdout
    parsed = runs(result.stdout)
    assert style_of(result.stdout, "error") == f"color:{ansi_html.PALETTE16[1]};font-weight:bold"
    assert "\x1b" not in "".join(data for _, data in parsed.runs)
    assert "LlavaForConditionalGeneration" in "".join(data for _, data in parsed.runs)
