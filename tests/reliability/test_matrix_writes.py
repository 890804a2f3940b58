"""``matrix -o FILE`` writes a matrix and nothing else, and its page shows every row whatever a file is named
(issue 38, items 2, 7 and 9).

``-o minisgl/models/llava.py`` turned the model file into the HTML page, exit 0, and ``-o pyproject.toml`` too;
``-o`` onto a FIFO blocked for ever, opening it to write. The page's JSON escaped ``</`` but not ``<!--``, so a
model file named ``y<!--<script>.py`` left the page blank (0 of 3 rows). Each case runs the command as CI does
on a small tree of its own; the page is read by a real headless Chromium.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from browser import dom
from spec_tree import spec_contract, wrapper, write_tree

FORMATS = ("table", "markdown", "json", "html")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path, {"srt/models/llava.py": wrapper("Llava", "get_embed_and_head")})


def matrix(tree: Path, *args: str, timeout: float = 120):
    return spec_contract(tree, "matrix", "--no-cache", "--engine", ".", *args, timeout=timeout)


def assert_refused(result, *words: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("spec-contract: error: support matrix "), result.stderr
    assert all(word in result.stderr for word in words), result.stderr


@pytest.mark.parametrize("named", ["srt/models/llava.py", "pyproject.toml"])
def test_a_file_the_matrix_did_not_write_is_never_replaced(tree, named):
    (tree / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1.0"\n')
    before = (tree / named).read_bytes()
    for form in FORMATS:
        assert_refused(matrix(tree, "--format", form, "-o", named), named, "not a support matrix spec-contract wrote",
                       "refusing")
        assert (tree / named).read_bytes() == before


def test_a_matrix_it_wrote_is_replaced_in_every_format_and_no_temporary_file_is_left(tree):
    for form in FORMATS:
        for _ in range(2):  # the first run makes the file, the second replaces it
            result = matrix(tree, "--format", form, "-o", "out")
            assert result.returncode == 0, result.stderr
        if form == "json":
            assert json.loads((tree / "out").read_text())["tool"] == "spec-contract matrix"
    (tree / "empty").write_text("")  # an empty file holds nothing to lose
    assert matrix(tree, "-o", "empty").returncode == 0
    assert sorted(p.name for p in tree.iterdir() if p.name.startswith(".")) == []


def test_a_page_written_before_pages_had_their_marker_is_still_replaced(tree):
    """A page from the release before this one (its ``<title>`` names the matrix) is one the matrix wrote."""
    (tree / "old.html").write_text('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n<meta http-equiv='
                                   '"Content-Security-Policy" content="default-src \'none\'">\n<title>spec-contract '
                                   'support matrix: sglang</title></head><body></body></html>\n')
    assert matrix(tree, "--format", "html", "-o", "old.html").returncode == 0


def test_a_fifo_a_directory_or_a_socket_is_refused_without_opening_it(tree):
    """Opening a FIFO to write blocks until a reader comes: the run must refuse it, not wait (``timeout``)."""
    os.mkfifo(tree / "pipe")
    (tree / "folder").mkdir()
    for named in ("pipe", "folder"):
        assert_refused(matrix(tree, "-o", named, timeout=60), named, "not a regular file")
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind(str(tree / "sock"))
        assert_refused(matrix(tree, "-o", "sock", timeout=60), "not a regular file")
    assert (tree / "pipe").is_fifo() and (tree / "folder").is_dir() and (tree / "sock").is_socket()


def test_a_symlinked_page_is_written_through_the_link(tree, tmp_path):
    real = tmp_path / "site" / "matrix.html"
    real.parent.mkdir()
    (tree / "matrix.html").symlink_to(real)
    assert matrix(tree, "--format", "html", "-o", "matrix.html").returncode == 0
    assert (tree / "matrix.html").is_symlink() and "Llava" in real.read_text()


def test_a_model_file_named_like_markup_leaves_every_row_on_the_page(tree):
    (tree / "srt/models/y<!--<script>.py").write_text(wrapper("Yankee"))
    result = matrix(tree, "--format", "html", "-o", "page.html")
    assert result.returncode == 0, result.stderr
    shown = dom(tree / "page.html")
    assert shown.count("<tr data-architecture=") == 3 and "3 of 3 architectures" in shown
    assert 'data-architecture="Yankee"' in shown
    text = (tree / "page.html").read_text()
    payload = text.split('id="matrix-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in payload and "y\\u003c!--\\u003cscript\\u003e.py" in payload
