"""The run's kept folder listings walk a tree exactly as ``os.walk`` does, however often they are walked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from spec_contract.engine.read.listing import Listings


def _tree(root: Path) -> Path:
    for folder in ["a/b/c", "a/d", "e", "z/y"]:
        (root / folder).mkdir(parents=True)
    for file in ["top.py", "a/x.py", "a/b/c/deep.py", "e/__init__.py", "z/y/w.py"]:
        (root / file).write_text("")
    (root / "link_to_a").symlink_to(root / "a", target_is_directory=True)
    (root / "a/d/loop").symlink_to(root / "a", target_is_directory=True)  # followed, a loop: walks stop on names
    (root / "file_link.py").symlink_to(root / "top.py")
    (root / "dangling").symlink_to(root / "nowhere")
    return root


def _pruned(walk: object, limit: int) -> list[tuple[str, list[str], list[str]]]:
    """The walk with every folder's subfolders sorted, and the ones named ``b`` or ``loop`` past ``limit``
    levels left out, as the engine's walks prune them."""
    seen = []
    for dirpath, dirnames, filenames in walk:  # type: ignore[attr-defined]
        dirnames[:] = sorted(d for d in dirnames if d != "b" and (d != "loop" or dirpath.count(os.sep) < limit))
        seen.append((dirpath, list(dirnames), sorted(filenames)))
    return seen


@pytest.mark.parametrize("followlinks", [False, True])
def test_a_kept_listing_walks_as_os_walk_does(tmp_path: Path, followlinks: bool) -> None:
    top = _tree(tmp_path)
    listings = Listings()
    expected = _pruned(os.walk(top, followlinks=followlinks), top.as_posix().count("/") + 6)
    assert _pruned(listings.walk(top, followlinks=followlinks), top.as_posix().count("/") + 6) == expected
    # a second walk reads the listings the first took, unchanged by the first walk's pruning
    assert sorted(listings.walk(top, followlinks=followlinks)) == sorted(os.walk(top, followlinks=followlinks))
    assert any(path.endswith("link_to_a") for path, _, _ in expected) == followlinks


def test_a_folder_that_cannot_be_listed_is_reported_each_walk(tmp_path: Path) -> None:
    errors: list[OSError] = []
    listings = Listings()
    for _ in range(2):
        assert list(listings.walk(tmp_path / "missing", onerror=errors.append)) == []
    assert [e.filename for e in errors] == [str(tmp_path / "missing")] * 2
