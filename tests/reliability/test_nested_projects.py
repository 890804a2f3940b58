"""A project inside a project is checked once, as itself (issue 24, item 7).

An outer project with a vendored inner copy that has its own ``[tool.spec-contract]`` used to walk into it:
with ``enable = false`` in the inner, the outer run still reported the inner's findings (and ``check .
vendor/inner/sglang`` printed "skipped" and reported them anyway); with the inner enabled, one run reported
each of its findings twice.
"""

from __future__ import annotations

import json
from pathlib import Path

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
