"""The .vsix users install carries no test code: the end-to-end test hook (hook/) is only in the test build
that vscode_harness.py installs into code-server. Needs npm and the extension's npm packages, not code-server."""

from __future__ import annotations

import zipfile

from vscode_harness import BUNDLE_IN_VSIX, package_extension, require_build_tools, with_test_hook

# Strings of the hook that survive minification: the environment variable it reads, commands and a wait only it
# uses. Each must be in the test build, or its absence from the shipped bundle would prove nothing.
HOOK_MARKERS = [
    "SPEC_CONTRACT_TEST_REPORT",
    "vscode.executeHoverProvider",
    "vscode.executeCodeActionProvider",
    "the contract view to show the contract",
]


def bundle_of(vsix) -> str:
    with zipfile.ZipFile(vsix) as package:
        return package.read(BUNDLE_IN_VSIX).decode("utf-8")


def test_shipped_bundle_has_no_test_hook(tmp_path):
    require_build_tools()
    shipped = package_extension()
    with zipfile.ZipFile(shipped) as package:
        assert not [name for name in package.namelist() if "hook" in name.lower()], package.namelist()
    assert [marker for marker in HOOK_MARKERS if marker in bundle_of(shipped)] == []
    assert [marker for marker in HOOK_MARKERS if marker not in bundle_of(with_test_hook(shipped, tmp_path))] == []
