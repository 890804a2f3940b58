"""Engine spans (code points) ↔ LSP positions in each negotiated encoding."""

import pytest
from lsprotocol import types
from pygls.workspace import PositionCodec
from spec_contract.engine.results import Span
from spec_contract.lsp.convert import SourceLines, from_position, lines_of, path_of, to_range, uri_of

TEXT = "x = 1\nclass Ünïcode😀Wrapper:  # é\n    pass\n"
LINES = lines_of(TEXT)


@pytest.mark.parametrize(
    ("encoding", "start", "end"),
    [("utf-8", 6, 6 + len("Ünïcode😀Wrapper".encode())),
     ("utf-16", 6, 6 + len("Ünïcode😀Wrapper".encode("utf-16-le")) // 2),
     ("utf-32", 6, 6 + len("Ünïcode😀Wrapper"))],
)
def test_class_name_span_in_each_encoding(encoding, start, end):
    span = Span(1, 6, 1, 6 + len("Ünïcode😀Wrapper"))
    rng = to_range(span, LINES, PositionCodec(encoding))
    assert rng == types.Range(types.Position(1, start), types.Position(1, end))


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_round_trip_of_every_character_boundary(encoding):
    codec = PositionCodec(encoding)
    line = LINES[1].rstrip("\n")
    for index in range(len(line) + 1):
        client = to_range(Span(1, index, 1, index), LINES, codec).start
        assert from_position(client, LINES, codec) == (1, index)


def test_from_position_does_not_mutate_the_request_position():
    position = types.Position(2, 400)
    from_position(position, LINES, PositionCodec("utf-8"))
    assert position == types.Position(2, 400)


def test_uris_and_paths(tmp_path):
    path = tmp_path / "dir with space" / "mod.py"
    assert path_of(uri_of(str(path))) == str(path)
    assert path_of("untitled:Untitled-1") is None


def test_source_lines_fall_back_to_disk(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("a\nb\n", encoding="utf-8")
    assert SourceLines()(str(path)) == ["a\n", "b\n"]
    assert SourceLines()(str(tmp_path / "missing.py")) == []


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_to_range_answers_as_pygls_counts_on_ascii_and_wider_lines_and_past_the_end(encoding):
    # An ASCII prefix is answered without pygls (one unit per character in every encoding); everything else,
    # and a position past the last line, must come out exactly as pygls's own count.
    codec = PositionCodec(encoding)
    lines = ["class Wrapper:  # ascii\n", "    name = 'π𝒲é'  # wider\n", "\n", "x = 1"]
    for line in range(len(lines) + 2):
        for col in range(0, 30, 3):
            expected = codec.position_to_client_units(lines, types.Position(line=line, character=col))
            got = to_range(Span(line, col, line, col), lines, codec)
            assert got.start == got.end == expected, (encoding, line, col)
