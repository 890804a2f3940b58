"""A project inside a project is checked once, as itself (issue 24, item 7).

An outer project with a vendored inner copy that has its own ``[tool.spec-contract]`` used to walk into it:
with ``enable = false`` in the inner, the outer run still reported the inner's findings (and ``check .
vendor/inner/sglang`` printed "skipped" and reported them anyway); with the inner enabled, one run reported
each of its findings twice.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from framing import RawServer
from spec_tree import check, wrapper, write_tree


def nested(tmp_path: Path, inner_table: str) -> Path:
    outer = tmp_path / "outer"
    write_tree(outer, {"srt/models/kimi.py": wrapper("Kimi")})
    (outer / "pyproject.toml").write_text("[tool.spec-contract]\n")
    inner = outer / "vendor" / "inner"
    write_tree(inner, {"srt/models/llava.py": wrapper("Llava")})
    (inner / "pyproject.toml").write_text(f"[tool.spec-contract]\n{inner_table}")
    return outer


def reported(result) -> list[tuple[str, str]]:
    assert result.returncode in (0, 1), result.stderr
    return sorted((f["path"], f["method"]) for f in json.loads(result.stdout)["findings"])


def classes(result) -> list[str]:
    return sorted({f["class"] for f in json.loads(result.stdout)["findings"]})


def test_a_disabled_inner_copy_is_not_reported_by_the_outer_project(tmp_path):
    outer = nested(tmp_path, "enable = false\n")
    result = check(outer, ".", "--format", "json")
    assert classes(result) == ["Kimi"]
    assert "skipped" in result.stderr and "vendor/inner" in result.stderr


def test_a_path_into_a_disabled_inner_copy_reports_nothing_of_it(tmp_path):
    outer = nested(tmp_path, "enable = false\n")
    result = check(outer, ".", "vendor/inner/sglang", "--format", "json")
    assert classes(result) == ["Kimi"]
    alone = check(outer, "vendor/inner/sglang")
    assert alone.returncode == 0 and "skipped" in alone.stderr and "Llava" not in alone.stdout


def test_an_enabled_inner_copy_is_reported_once(tmp_path):
    outer = nested(tmp_path, "")
    for paths in ([], ["."], [".", "vendor/inner/sglang"], [".", "vendor/inner"]):
        result = check(outer, *paths, "--format", "json")
        found = reported(result)
        assert len(found) == len(set(found)), (paths, found)
        assert classes(result) == ["Kimi", "Llava"], paths


def test_the_outer_project_alone_leaves_the_inner_tree_out(tmp_path):
    """The engine's walk itself: the outer project's analysis holds none of the inner's files."""
    from spec_contract.engine import Project, load_config

    outer = nested(tmp_path, "")
    analysis = Project(outer, load_config(outer), use_cache=False).analyze()
    assert {f.class_qualname.rpartition(".")[2] for f in analysis.findings} == {"Kimi"}
    assert not [m for m in analysis.models if "vendor" in m.path]


def _open(server, path: Path) -> None:
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": path.as_uri(), "languageId": "python", "version": 1, "text": path.read_text()}})


def _sc001(server, path: Path):
    return server.wait_for(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == path.as_uri()
        and any(d.get("code") == "SC001" for d in m["params"]["diagnostics"]), f"SC001 for {path.name}")


@contextlib.contextmanager
def served(tmp_path: Path, inner_table: str) -> Iterator[tuple[RawServer, Path]]:
    """The server on the outer project, its wrapper's diagnostics in, and the inner copy's wrapper opened."""
    outer = nested(tmp_path, inner_table)
    outer_file = outer / "sglang/srt/models/kimi.py"
    inner_file = outer / "vendor/inner/sglang/srt/models/llava.py"
    env = {**os.environ, "SPEC_CONTRACT_CACHE_DIR": str(tmp_path / "server-cache")}
    with RawServer(cwd=outer, env=env) as server:
        server.initialize(outer)
        _open(server, outer_file)
        _sc001(server, outer_file)
        _open(server, inner_file)
        yield server, inner_file
        assert "result" in server.call("shutdown")
        server.notify("exit")


def test_the_server_analyses_an_inner_copy_as_its_own_project(tmp_path):
    with served(tmp_path, "") as (server, inner_file):
        published = _sc001(server, inner_file)
        assert {d["message"].split("`")[1] for d in published["params"]["diagnostics"]} == {"Llava"}
        said = json.dumps([m for m in server.received if m.get("method") == "window/logMessage"])
        assert "vendor/inner" in said  # analysed in the project discovery found for it


def test_the_server_reports_nothing_of_a_disabled_inner_copy(tmp_path):
    with served(tmp_path, "enable = false\n") as (server, inner_file):
        server.wait_for(lambda m: m.get("method") == "window/logMessage" and "vendor/inner" in m["params"]["message"],
                        "a word on the inner project")
        server.call("textDocument/hover", {"textDocument": {"uri": inner_file.as_uri()},
                                           "position": {"line": 3, "character": 7}})
        assert not [m for m in server.received if m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == inner_file.as_uri() and m["params"]["diagnostics"]]
